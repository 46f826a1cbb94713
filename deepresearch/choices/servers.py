"""Local and open model servers by name: their usual local address, and the variable that holds a
key for them (most want none). deepresearch.llm.providers talks to them."""

from __future__ import annotations

PROVIDERS: dict[str, dict[str, str]] = {
    "ollama": {"url": "http://127.0.0.1:11434/v1", "key": "OLLAMA_API_KEY", "start": "ollama serve"},
    "vllm": {"url": "http://127.0.0.1:8000/v1", "key": "VLLM_API_KEY", "start": "vllm serve <model>"},
    "llamacpp": {"url": "http://127.0.0.1:8080/v1", "key": "LLAMACPP_API_KEY", "start": "llama-server -m <file.gguf>"},
    "lmstudio": {"url": "http://127.0.0.1:1234/v1", "key": "LMSTUDIO_API_KEY", "start": "lms server start"},
}
KEY_ENV = tuple(p["key"] for p in PROVIDERS.values())


def provider_of(spec: str) -> str | None:
    """'ollama' for 'ollama:qwen3:8b'; None when `spec` names no local provider."""
    name, sep, _ = spec.partition(":")
    return name if sep and name in PROVIDERS else None
