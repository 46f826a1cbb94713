"""`langgraph dev` in a subprocess, for the tests and the benchmarks (one way of starting it).

The server runs offline (no analytics, no version check, no tracing, no browser, no reload)
on a free port of 127.0.0.1, in a scratch folder with the repository's langgraph.json made
absolute (its in-memory state, .langgraph_api/, stays there), in its own process group, and is
stopped by that group's id: TERM first (the dev server saves its state as it shuts down), then
KILL.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANGGRAPH = Path(sys.executable).parent / "langgraph"  # the CLI of the virtualenv running us
START_TIMEOUT = 120
OFFLINE_ENV = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true", "LANGSMITH_TRACING": "false"}


class DevServerError(RuntimeError):
    """The server exited or did not answer in time (the message ends with its log)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served_config(folder: Path) -> Path:
    """The repository's langgraph.json with its paths made absolute, so the server can run in
    `folder`, and without its `.env` file (no real keys). Written once per folder."""
    out = folder / "langgraph.json"
    if out.exists():
        return out
    spec = json.loads((ROOT / "langgraph.json").read_text())

    def absolute(target: str) -> str:
        path, _, var = target.partition(":")
        assert (ROOT / path).is_file(), target
        return f"{(ROOT / path).resolve()}:{var}"

    for gid, target in spec["graphs"].items():
        entry = target if isinstance(target, dict) else {"path": target}
        spec["graphs"][gid] = {**entry, "path": absolute(entry["path"])}
    if spec.get("http", {}).get("app"):  # the web page's routes (deepresearch/web/app.py)
        spec["http"] = {**spec["http"], "app": absolute(spec["http"]["app"])}
    if spec.get("auth", {}).get("path"):  # who may use the server (deepresearch/auth/server.py)
        spec["auth"] = {**spec["auth"], "path": absolute(spec["auth"]["path"])}
    spec["dependencies"] = [str((ROOT / d).resolve()) for d in spec.get("dependencies", [])]
    spec.pop("env", None)
    out.write_text(json.dumps(spec))
    return out


def stop(proc: subprocess.Popen) -> None:
    """Stop a server and its workers by process group id: TERM, then KILL."""
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


class DevServer:
    """`langgraph dev` serving the repository's graphs from `folder`, answering on `url` once
    started. `env`: variables added to this process's environment (keys ending in _API_KEY are
    dropped first: give the fake ones); `n_jobs`: runs it executes at once (its default is 1);
    `host`: the address it listens on (it is reached on 127.0.0.1 all the same); `port`: its port
    (default a free one; give the old one to start a server again where it was); `args`: more
    arguments of `langgraph dev`."""

    def __init__(
        self,
        folder: Path,
        env: dict | None = None,
        *,
        n_jobs: int | None = None,
        log_name: str = "server.log",
        host: str = "127.0.0.1",
        args: tuple[str, ...] = (),
        port: int | None = None,
    ):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = folder / log_name
        full_env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        full_env.update(OFFLINE_ENV, PYTHONPATH=str(ROOT), **(env or {}))
        if not LANGGRAPH.is_file():
            raise DevServerError(f"{LANGGRAPH} is missing: pip install 'langgraph-cli[inmem]'")
        command = [
            str(LANGGRAPH),
            "dev",
            "--no-browser",
            "--no-reload",
            "--host",
            host,
            "--port",
            str(self.port),
            *args,
        ]
        if n_jobs:
            command += ["--n-jobs-per-worker", str(n_jobs)]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                command + ["--config", str(served_config(folder))],
                cwd=str(folder),
                env=full_env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )  # its own process group

    def log(self, tail: int = 6000) -> str:
        return re.sub(r"\x1b\[[0-9;]*m", "", self.log_path.read_text(errors="replace"))[-tail:]

    def wait_ready(self, timeout: float = START_TIMEOUT) -> DevServer:
        """Wait until it answers /ok; DevServerError (and the server stopped) if it never does."""
        import httpx

        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise DevServerError(f"langgraph dev exited with status {self.proc.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise DevServerError(f"langgraph dev did not answer on {self.url} within {timeout:.0f}s:\n{self.log()}")
            time.sleep(0.3)

    def stop(self) -> None:
        stop(self.proc)
