"""Local and open model servers by name: `ollama:`, `vllm:`, `llamacpp:`, `lmstudio:`.

Each is an OpenAI-compatible server reached through the same client as `openai:<model>`
(deepresearch.llm.models), with its usual local address as the default base URL (`--base-url`
overrides it) and its own key variable (most local servers want none; the user's
OPENAI_API_KEY is never sent to them).

`check_served(spec, base_url)` asks the server's `GET /v1/models` whether it serves the
model, before any research: a server that is down or a model it does not list is one
clear ModelConfigError naming what it has. `served_context_window(spec, base_url)` reads
the context window where the server says it: vLLM's `max_model_len` in `/v1/models`,
llama.cpp's `GET /props` (`default_generation_settings.n_ctx`), Ollama's `/api/show` (the model's `num_ctx` parameter; else Ollama's default of 4,096, or the model's
own `*.context_length` when smaller: a larger OLLAMA_CONTEXT_LENGTH is not visible through
the API, so give it with `--context-window`).
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request

from deepresearch.choices.servers import KEY_ENV, PROVIDERS, provider_of  # noqa: F401 - KEY_ENV: the keys never sent elsewhere

NO_KEY = "not-needed"  # what a server started without a key is sent (the client must send something)
LIST_TIMEOUT = 10.0
OLLAMA_DEFAULT_CTX = 4096  # Ollama's context length without num_ctx or OLLAMA_CONTEXT_LENGTH (< 24 GiB VRAM)
MAX_LISTING = 4 * 1024 * 1024  # bytes of a model listing read at most


class ServerError(ValueError):
    """The server cannot be used for this run (down, or it does not serve the model)."""


def model_name(spec: str) -> str:
    """The model as the server names it: everything after the provider (it may hold ':')."""
    return spec.partition(":")[2]


def _entry(spec: str) -> dict[str, str]:
    """The PROVIDERS entry of the provider `spec` names (KeyError when it names none)."""
    provider = provider_of(spec)
    if provider is None:
        raise KeyError(spec)
    return PROVIDERS[provider]


def base_url_for(spec: str, base_url: str | None) -> str:
    return (base_url or _entry(spec)["url"]).rstrip("/")


def api_key_for(spec: str) -> str:
    return os.environ.get(_entry(spec)["key"]) or NO_KEY


def _get(url: str, spec: str, *, method: str = "GET", body: dict | None = None, timeout: float = LIST_TIMEOUT):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        url,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {api_key_for(spec)}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310 - http(s) base URLs only (checked)
        return json.loads(r.read(MAX_LISTING))


def list_models(spec: str, base_url: str | None = None, *, timeout: float = LIST_TIMEOUT) -> list[dict]:
    """The models the server lists (`GET {base_url}/models`), as its dicts (each with an `id`)."""
    url = base_url_for(spec, base_url)
    if not re.match(r"https?://", url):
        raise ServerError(f"--base-url {url!r} is not an http(s) URL")
    provider = provider_of(spec)
    try:
        data = _get(f"{url}/models", spec, timeout=timeout)
    except urllib.error.HTTPError as e:
        raise ServerError(f"the {provider} server at {url} answered HTTP {e.code} to GET /models") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise ServerError(
            f"cannot reach the {provider} server at {url} ({reason}); start it with "
            f"`{_entry(spec)['start']}` or give --base-url"
        ) from None
    except ValueError:
        raise ServerError(f"the {provider} server at {url} sent a model list that is not JSON") from None
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ServerError(f"the {provider} server at {url} sent no model list (no 'data')")
    return [m for m in items if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _matches(wanted: str, listed: str) -> bool:
    # Ollama lists 'qwen3:latest' for 'qwen3'; LM Studio and llama.cpp may list a file path
    return listed == wanted or listed == f"{wanted}:latest" or listed.rsplit("/", 1)[-1] == wanted


def check_served(spec: str, base_url: str | None = None, *, timeout: float = LIST_TIMEOUT) -> dict:
    """The server's entry for the model of `spec`; ServerError naming the models it has when
    it does not list it."""
    wanted = model_name(spec)
    models = list_models(spec, base_url, timeout=timeout)
    for m in models:
        if _matches(wanted, m["id"]):
            return m
    have = ", ".join(sorted(m["id"] for m in models)[:20]) or "none"
    raise ServerError(
        f"the {provider_of(spec)} server at {base_url_for(spec, base_url)} does not serve {wanted!r}; it has: {have}"
    )


def served_context_window(spec: str, base_url: str | None = None, entry: dict | None = None) -> int | None:
    """The context window the server says the model runs with (None: it does not say)."""
    provider = provider_of(spec)
    entry = entry if entry is not None else check_served(spec, base_url)
    n = entry.get("max_model_len")  # vLLM
    if isinstance(n, int) and n > 0:
        return n
    root = base_url_for(spec, base_url).removesuffix("/v1")
    if provider == "llamacpp":  # GET /props: the slots' context size (-c / --ctx-size)
        try:
            n = (_get(f"{root}/props", spec).get("default_generation_settings") or {}).get("n_ctx")
        except (urllib.error.URLError, OSError, ValueError, AttributeError):
            return None
        return n if isinstance(n, int) and n > 0 else None
    if provider == "ollama":
        try:
            info = _get(f"{root}/api/show", spec, method="POST", body={"model": entry["id"]})
        except (urllib.error.URLError, OSError, ValueError):
            return None
        m = re.search(r"^num_ctx\s+(\d+)", str(info.get("parameters") or ""), re.MULTILINE)
        if m:
            return int(m.group(1))
        # without num_ctx Ollama runs the model with OLLAMA_CONTEXT_LENGTH (not visible here) or its
        # default, 4,096 on most machines, and cuts longer prompts silently: assume that default
        for key, value in (info.get("model_info") or {}).items():
            if key.endswith(".context_length") and isinstance(value, int) and value > 0:
                return min(value, OLLAMA_DEFAULT_CTX)
    return None
