"""Is the installed llama.cpp (llama-cpp-python) a portable build?

llama-cpp-python compiles llama.cpp when pip installs it, by default with native flags: the library
then holds whatever the building CPU has (AVX-512, AMX tile kernels on a recent Xeon) and dies with
"Illegal instruction" where the process may not use them. The Makefile builds it portably (no AVX-512,
no AMX, AVX2/FMA/F16C where the CPU has them); this check tells whether the build installed is such
a one, from the CPU features llama.cpp reports it was compiled for. It runs before the package is
installed (`python deepresearch/llm/portable.py`), so it imports nothing of the project.

Exit status 0: portable; 1: not installed or not portable (the Makefile then rebuilds it).
"""

from __future__ import annotations

import sys
from pathlib import Path

# llama.cpp's feature names that are instruction sets no portable build may hold
NOT_PORTABLE = ("AVX512", "AMX")
# llama.cpp's feature name -> the flag /proc/cpuinfo shows when the CPU has it
CPUINFO_FLAG = {
    "SSE3": "pni",
    "SSSE3": "ssse3",
    "AVX": "avx",
    "AVX2": "avx2",
    "F16C": "f16c",
    "FMA": "fma",
    "BMI2": "bmi2",
    "AVX_VNNI": "avx_vnni",
}


def compiled_features(system_info: str) -> set[str]:
    """The features a `llama_print_system_info()` line reports as on ("AVX2 = 1 | ...")."""
    out = set()
    for part in system_info.replace("CPU :", "|").split("|"):
        name, _, value = part.partition("=")
        if value.strip() == "1":
            out.add(name.strip())
    return out


def cpu_flags() -> set[str] | None:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return None


def problems(features: set[str], flags: set[str] | None) -> list[str]:
    """Why a build with these compiled-in features is not portable here (empty: it is)."""
    out = [f"{f} is compiled in" for f in sorted(features) if f.startswith(NOT_PORTABLE)]
    if flags is not None:
        out += [
            f"{f} is compiled in but this CPU lacks it"
            for f in sorted(features)
            if f in CPUINFO_FLAG and CPUINFO_FLAG[f] not in flags
        ]
    return out


def main(argv: list[str]) -> int:
    quiet = "--quiet" in argv
    try:
        import llama_cpp
    except Exception:  # noqa: BLE001 - not installed, or a build that cannot load here
        if not quiet:
            print("llama-cpp-python is not installed (or cannot load)", file=sys.stderr)
        return 1
    info = llama_cpp.llama_print_system_info().decode(errors="replace")
    found = problems(compiled_features(info), cpu_flags())
    if found:
        if not quiet:
            print(
                f"llama-cpp-python {llama_cpp.__version__} is not a portable build: {'; '.join(found)}", file=sys.stderr
            )
        return 1
    if not quiet:
        print(f"llama-cpp-python {llama_cpp.__version__}: a portable build ({info.strip().rstrip('|').strip()})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
