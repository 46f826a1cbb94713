"""A pip install of this checkout, offline, for tests/test_pip_install.py: a wheel built from a copy of
the checkout, installed into a fresh virtualenv that reuses the packages this one has installed.

The fresh environment sees this virtualenv's packages through a folder of links (named by a .pth
file), without this checkout's editable install and without the packages a test leaves out (the
`local` extra, the meaning model's weights): a package left out is not there at all, as on a machine
where it was never installed. pip never uninstalls from that folder (it is outside the environment).
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = Path(sysconfig.get_paths()["purelib"])  # this virtualenv's packages
COPY_IGNORE = shutil.ignore_patterns(".venv", ".git", "build", "site", "*.egg-info", "__pycache__", ".pytest_cache")
NEVER_SEEN = ("deepresearch", "__editable__", "_distutils_hack", "distutils-precedence")  # the checkout itself


def build_wheel(folder: Path) -> tuple[Path, str]:
    """A wheel of the checkout (built from a copy: the checkout gets no build folder), and what the
    build said (pip -v shows the build backend's output, its warnings included)."""
    source = folder / "source"
    shutil.copytree(ROOT, source, ignore=COPY_IGNORE)
    shutil.rmtree(source / "tests" / "artifacts", ignore_errors=True)
    out = folder / "wheels"
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "--no-index", str(source)]
        + ["-w", str(out), "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (wheel,) = out.glob("deepresearch-*.whl")
    return wheel, r.stdout + r.stderr


def fresh_venv(folder: Path, leave_out: tuple[str, ...]) -> Path:
    """A virtualenv at `folder` (its python returned) seeing this one's packages but those whose
    import or distribution name starts with one of `leave_out`."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    view = folder / "view"
    view.mkdir()
    skip = tuple(n.lower() for n in NEVER_SEEN + leave_out)
    for entry in SITE.iterdir():
        name = entry.name.lower()
        if name.startswith(skip) or name.endswith(".pth") or name == "__pycache__":
            continue
        (view / entry.name).symlink_to(entry)
    (site / "_reused.pth").write_text(f"{view}\n")
    return python


def repack(distribution: str, folder: Path) -> Path:
    """An installed distribution as a wheel again (its files, as its RECORD lists them), for pip to
    install offline (PIP_FIND_LINKS)."""
    dist = metadata.distribution(distribution)
    info = Path(str(dist._path))  # type: ignore[attr-defined] - the .dist-info folder
    root = info.parent
    record = (info / "RECORD").read_text().splitlines()
    name = dist.metadata["Name"].replace("-", "_")
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{dist.version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as z:
        for row in csv.reader(record):
            path = row[0]
            if not path or path.startswith("..") or "__pycache__" in path or path.endswith(("INSTALLER", "REQUESTED")):
                continue
            if (root / path).is_file():
                z.write(root / path, path)
    return wheel


def offline_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HOME=str(home), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env
