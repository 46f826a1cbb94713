"""The llama.cpp that the `local` extra installed runs on any x86-64 machine.

A build with llama-cpp-python's default (native) flags held AMX tile kernels on a recent Xeon and
died there with "Illegal instruction" at the first tile instruction; on this kind of machine the same
flags compile in AVX-512. These tests read the installed library itself: its machine code
(disassembled with binutils' objdump, which every C toolchain has) and the features llama.cpp says it
was compiled for, independently of the project's own check; and that check
(deepresearch/llm/portable.py, which the Makefile runs to decide whether to rebuild) itself: it
passes the installed library and fails one that reports AVX-512 compiled in.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import llama_cpp  # the `local` extra: `make test` installs it
import pytest

pytestmark = pytest.mark.no_index  # searches nothing: runs while the session builds the index (tests/conftest.py)

# AMX tile instructions, and any use of AVX-512's 512-bit registers or mask registers
FORBIDDEN = re.compile(
    r"\b(?:tilezero|tileloadd\w*|tilestored|tilerelease|ldtilecfg|sttilecfg|tdpb\w+|tdpfp16ps)\b"
    r"|%zmm\d+|%k[1-7]\b"
)


def _libraries() -> list[Path]:
    lib = Path(llama_cpp.__file__).resolve().parent / "lib"
    found = sorted(p for p in lib.glob("libggml*.so*") if not p.is_symlink())
    assert found, f"no llama.cpp library under {lib}"
    return found


def test_the_installed_library_holds_no_avx512_or_amx_instruction():
    objdump = shutil.which("objdump")
    assert objdump, "objdump (binutils) is part of the C toolchain the install needs"
    offending: dict[str, list[str]] = {}
    for path in _libraries():
        proc = subprocess.run(
            [objdump, "-d", "--no-show-raw-insn", str(path)], capture_output=True, text=True, check=True
        )
        hits = [line.strip() for line in proc.stdout.splitlines() if FORBIDDEN.search(line)]
        if hits:
            offending[path.name] = hits[:3] + [f"... {len(hits)} in all"]
    assert not offending, f"instructions a portable build never holds: {offending}"


def test_llama_cpp_reports_no_native_only_feature():
    out = subprocess.run(
        [sys.executable, "-c", "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    on = {m.group(1) for m in re.finditer(r"(\w+) = 1", out)}
    assert "AVX2" in on or "SSE3" in on, f"llama.cpp's report was not read: {out!r}"
    assert not {f for f in on if f.startswith(("AVX512", "AMX"))}, out


def test_the_makefile_builds_it_without_native_flags_and_without_a_cached_wheel():
    make = Path(__file__).resolve().parent.parent / "Makefile"
    flags = subprocess.run(
        [
            "make",
            "-s",
            "--no-print-directory",
            "-f",
            str(make),
            "--eval",
            "llama-args: ; @echo $(LLAMA_CMAKE_ARGS)",
            "llama-args",
        ],
        capture_output=True,
        text=True,
        cwd=make.parent,
        check=True,
    ).stdout
    for flag in ("GGML_NATIVE=OFF", "GGML_AVX512=OFF", "GGML_AMX_INT8=OFF", "GGML_AMX_TILE=OFF"):
        assert f"-D{flag}" in flags, flag
    recipe = make.read_text(encoding="utf-8")
    assert 'CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)"' in recipe and "--no-cache-dir" in recipe


# the check the Makefile runs before it decides to rebuild (`python deepresearch/llm/portable.py`)
PORTABLE = Path(__file__).resolve().parent.parent / "deepresearch" / "llm" / "portable.py"
AVX512_INFO = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | AVX512 = 1 | AVX512_VNNI = 1 |"


def _check(pythonpath: str | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", **({"PYTHONPATH": pythonpath} if pythonpath else {})}
    return subprocess.run([sys.executable, str(PORTABLE)], capture_output=True, text=True, env=env, check=False)


def test_the_makefiles_check_passes_the_installed_library():
    r = _check()
    assert r.returncode == 0, r.stderr
    assert "a portable build" in r.stdout


def test_the_makefiles_check_fails_a_library_with_avx512_compiled_in(tmp_path):
    """A llama_cpp whose system info says AVX-512 is compiled in (a stand-in module, as a native
    build on an AVX-512 machine reports itself): the check exits 1 saying so, and the Makefile
    rebuilds."""
    fake = tmp_path / "llama_cpp"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        f"__version__ = '0.0-native'\ndef llama_print_system_info():\n    return {AVX512_INFO!r}.encode()\n",
        encoding="utf-8",
    )
    r = _check(str(tmp_path))
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "not a portable build" in r.stderr and "AVX512 is compiled in" in r.stderr
