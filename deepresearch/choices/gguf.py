"""`gguf:/path/model.gguf`: any chat model in a GGUF file, run in-process by llama.cpp like the
embedded model (deepresearch.llm.models.LocalChatModel), so a 3-8B model file gives a capable
model without a server.

llama.cpp takes the chat template from the file (`tokenizer.chat_template`), and the model's
trained context length from its metadata sets the context window: up to MAX_CONTEXT tokens, as
a larger one would hold gigabytes of cache for an 8B model (`--context-window` may ask for less).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from deepresearch.text.safe import one_line

PREFIX = "gguf:"
MAX_CONTEXT = 8192
DEFAULT_CONTEXT = 4096  # a file that does not say its trained context length


def path_of(spec: str) -> Path:
    return Path(spec[len(PREFIX) :]).expanduser().resolve()


def problem(spec: str) -> str | None:
    """Why `spec` cannot run (no readable GGUF file, no llama-cpp-python), or None."""
    if not spec[len(PREFIX) :].strip():
        return "gguf: needs the path of a model file, e.g. gguf:./qwen3-4b-q4_k_m.gguf"
    path = path_of(spec)
    shown = one_line(spec[len(PREFIX) :], 120)
    if not path.is_file():
        return f"gguf: no such model file: {shown}"
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as e:
        return f"gguf: cannot read {shown}: {e.strerror}"
    if magic != b"GGUF":
        return f"gguf: {shown} is not a GGUF model file"
    if importlib.util.find_spec("llama_cpp") is None:
        return "gguf: models run with llama-cpp-python: pip install 'deepresearch[local]'"
    return None


@functools.lru_cache(maxsize=8)
def trained_context(path: str) -> int | None:
    """The model's trained context length from the file's metadata (its vocabulary only is loaded)."""
    from llama_cpp import Llama

    meta = Llama(model_path=path, vocab_only=True, n_ctx=256, verbose=False).metadata
    value = str(meta.get(f"{meta.get('general.architecture', 'llama')}.context_length") or "")
    return int(value) if value.isdigit() else None


def context_window(spec: str) -> int:
    """The context window a `gguf:` model runs with."""
    return min(trained_context(str(path_of(spec))) or DEFAULT_CONTEXT, MAX_CONTEXT)
