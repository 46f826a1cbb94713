"""Stubs of the local model servers on 127.0.0.1: Ollama, vLLM, llama.cpp's server, LM Studio.

Each behaves as its server's documentation says its OpenAI-compatible API does, in what the
product depends on:

- `GET /v1/models`: `{"object": "list", "data": [{"id": ...}]}`; vLLM adds `max_model_len`;
  llama.cpp's server answers `GET /props` with `default_generation_settings.n_ctx`;
  Ollama lists tagged names (`qwen3:latest`) and answers `POST /api/show` with `parameters`
  (`num_ctx ...`) and `model_info` (`<arch>.context_length`); LM Studio lists `publisher/name`;
- streamed replies in many small deltas (the first one carrying the role only, as vLLM and
  llama.cpp send it), usage in a last chunk when `stream_options.include_usage` asks;
- reasoning (`reasoning=`): "think" (a `<think>` block at the start of the content, as Ollama
  without `think`, vLLM without a reasoning parser, llama.cpp with `--reasoning-format none`
  send it), "reasoning_content" (vLLM's reasoning parsers, llama.cpp's default) or "reasoning"
  (Ollama, LM Studio); the reasoning's tokens are part of `completion_tokens` and of the
  `max_tokens` cap, as these servers count them. Every reasoning text holds REASONING_MARK
  and a JSON object of the asked schema with other values (`decoy`), so a leak shows;
- the completion cap under the names the server reads (`max_tokens`; vLLM also
  `max_completion_tokens`), any other name passed over as an unknown field;
- structured outputs (`supports=`): the `response_format` types and tools the server takes;
  others are refused with the server's error body (HTTP 400), or, with `ignores=True`,
  ignored (the reply is prose around a fenced JSON block, as a model without constrained
  decoding writes);
- `ignore_stream=True`: one JSON completion even to a streamed request (older servers);
- a context window (`n_ctx=`): a longer request is refused with the server's real error:
  vLLM's (prompt + max_tokens past `max_model_len`) or llama.cpp's `exceed_context_size_error`
  (prompt past n_ctx); `refused` counts them.

Tokens are counted as the other fakes count them (tests.fakes.count_tokens).
"""

from __future__ import annotations

import json
import time

from tests.fakes import MESSAGE_OVERHEAD, count_tokens, kind_of, truncate
from tests.stub_openai import StubOpenAI

REASONING_MARK = "SECRET-REASONING-7f3a"

FLAVORS = {
    #            models listed                      reasoning            structured outputs supported
    "ollama": {
        "models": ["qwen3:latest", "llama3.2:3b"],
        "reasoning": "reasoning",
        "supports": {"json_schema", "json_object", "tools"},
        "cap": ("max_tokens",),
    },
    "vllm": {
        "models": ["Qwen/Qwen3-4B"],
        "reasoning": "reasoning_content",
        "supports": {"json_schema", "json_object", "tools"},
        "cap": ("max_completion_tokens", "max_tokens"),
    },
    "llamacpp": {
        "models": ["qwen3-4b-q4_k_m.gguf"],
        "reasoning": "reasoning_content",
        "supports": {"json_schema", "json_object"},
        "cap": ("max_tokens",),
    },
    "lmstudio": {
        "models": ["qwen/qwen3-4b", "text-embedding-nomic-embed-text-v1.5"],
        "reasoning": "reasoning",
        "supports": {"json_schema"},
        "cap": ("max_tokens",),
    },
}


def decoy(kind: str) -> str:
    """A JSON object the reasoning 'considers': never to be read as the answer."""
    return json.dumps(
        {
            "research_complete": False,
            "outstanding_gaps": [REASONING_MARK],
            "tasks": [],
            "verdict": "unsupported",
            "concepts": [REASONING_MARK],
            "title": REASONING_MARK,
        }
    )


class LocalServerStub(StubOpenAI):
    def __init__(
        self,
        flavor: str,
        respond=None,
        *,
        reasoning: str | None = "default",
        supports=None,
        ignores: bool = False,
        ignore_stream: bool = False,
        n_ctx: int | None = None,
        ollama_num_ctx: int | None = None,
        **kw,
    ):
        super().__init__(respond, **kw)
        spec = FLAVORS[flavor]
        self.flavor = flavor
        self.models = list(spec["models"])
        self.reasoning = spec["reasoning"] if reasoning == "default" else reasoning
        self.supports = set(spec["supports"] if supports is None else supports)
        self.ignores = ignores
        self.ignore_stream = ignore_stream  # one JSON completion even when asked to stream
        self.n_ctx = n_ctx
        self.ollama_num_ctx = ollama_num_ctx
        self.refused = 0
        self.reasoning_tokens = 0  # of the replies sent in full
        self.gets: list[str] = []

    # --- what the server says about its models -------------------------------------------
    def model_list(self) -> dict:
        data = []
        for name in self.models:
            item = {"id": name, "object": "model", "created": 1700000000, "owned_by": self.flavor}
            if self.flavor == "vllm" and self.n_ctx:
                item["max_model_len"] = self.n_ctx
            data.append(item)
        return {"object": "list", "data": data}

    def show(self, body: dict) -> tuple[int, dict]:
        if not self.serves(body.get("model")):
            return 404, {"error": f"model '{body.get('model')}' not found"}
        info = {"general.architecture": "qwen3", "qwen3.context_length": 40960}
        params = f"num_ctx {self.ollama_num_ctx}\ntemperature 0.6" if self.ollama_num_ctx else "temperature 0.6"
        return 200, {"parameters": params, "model_info": info, "details": {"family": "qwen3"}}

    def serves(self, name) -> bool:
        # Ollama takes 'qwen3' for 'qwen3:latest'
        return name in self.models or (self.flavor == "ollama" and f"{name}:latest" in self.models)

    # --- refusals in each server's words ---------------------------------------------------
    def unsupported(self, what: str) -> tuple[int, dict]:
        if self.flavor == "vllm":
            return 400, {
                "object": "error",
                "message": f"{what} is not supported",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        if self.flavor == "lmstudio":
            return 400, {"error": f"'response_format.type' must be 'json_schema' or 'text' ({what})"}
        return 400, {"error": {"code": 400, "message": f"{what} is not supported", "type": "invalid_request_error"}}

    def too_long(self, prompt: int, cap: int) -> tuple[int, dict] | None:
        if not self.n_ctx:
            return None
        if self.flavor == "llamacpp" and prompt > self.n_ctx:
            return 400, {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": prompt,
                    "n_ctx": self.n_ctx,
                }
            }
        if self.flavor != "llamacpp" and prompt + cap > self.n_ctx:
            return 400, {
                "object": "error",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
                "message": (
                    f"This model's maximum context length is {self.n_ctx} tokens. However, you requested "
                    f"{prompt + cap} tokens ({prompt} in the messages, {cap} in the completion). Please reduce "
                    f"the length of the messages or completion."
                ),
            }
        return None

    def _handler(stub):  # noqa: N805
        base = StubOpenAI._handler(stub)

        class Handler(base):
            def do_GET(self):
                stub.gets.append(self.path)
                if self.path.rstrip("/") == "/v1/models":
                    return self._send(200, stub.model_list())
                if self.path == "/props" and stub.flavor == "llamacpp":
                    settings = {"n_ctx": stub.n_ctx or 4096, "temperature": 0.8}
                    return self._send(
                        200, {"default_generation_settings": settings, "total_slots": 1, "model_path": stub.models[0]}
                    )
                return self._send(404, {"error": "not found"})

            def do_POST(self):
                if self.path.rstrip("/") == "/api/show" and stub.flavor == "ollama":
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                    return self._send(*stub.show(body))
                return super().do_POST()

            def _chat(self, body, n):
                if not stub.serves(body.get("model")):
                    return self._send(404, {"error": {"message": f"model '{body.get('model')}' not found"}})
                rf = (body.get("response_format") or {}).get("type")
                tools = body.get("tools") or []
                ignored = False
                for what, used in (
                    ("json_schema", rf == "json_schema"),
                    ("json_object", rf == "json_object"),
                    ("tools", bool(tools)),
                ):
                    if used and what not in stub.supports:
                        if not stub.ignores:
                            return self._send(*stub.unsupported(what))
                        ignored = True
                messages = body.get("messages", [])
                prompt = "\n\n".join(str(m.get("content") or "") for m in messages)
                prompt_tokens = sum(count_tokens(str(m.get("content") or "")) + MESSAGE_OVERHEAD for m in messages)
                cap = next((body[n] for n in FLAVORS[stub.flavor]["cap"] if body.get(n)), None) or 10**6
                refusal = stub.too_long(prompt_tokens, cap)
                if refusal:
                    with stub.lock:
                        stub.refused += 1
                    return self._send(*refusal)
                kind = kind_of(prompt)
                use_tool = bool(tools) and not ignored
                if use_tool and kind == "text":
                    kind = tools[0]["function"]["name"]
                out = stub.respond(kind, prompt, n)
                if isinstance(out, tuple):
                    return self._send(out[0], out[1])
                answer = out if isinstance(out, str) else json.dumps(out)
                if ignored and not isinstance(out, str):  # no constrained decoding: prose around a fence
                    answer = f"Here is the JSON you asked for:\n```json\n{answer}\n```\nI hope this helps."
                thought = (
                    (
                        f"The user asks something; let me think. {REASONING_MARK} I could answer "
                        f"{decoy(kind)} but let me check the sources first."
                    )
                    if stub.reasoning
                    else ""
                )
                # the reasoning comes first and counts in the cap, as these servers count it
                reasoning = truncate(thought, cap)
                left = cap - count_tokens(reasoning)
                answer = truncate(answer, max(0, left)) if left > 0 else ""
                message: dict = {"role": "assistant", "content": answer}
                if use_tool and not isinstance(out, str) and answer:
                    message = {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": f"call_{n}",
                                "type": "function",
                                "function": {"name": tools[0]["function"]["name"], "arguments": answer},
                            }
                        ],
                    }
                completion_tokens = count_tokens(reasoning) + count_tokens(answer)
                usage = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                }
                finish = (
                    "length"
                    if count_tokens(thought) + count_tokens(out if isinstance(out, str) else json.dumps(out)) > cap
                    else "stop"
                )
                with stub.lock:
                    stub.reasoning_tokens += count_tokens(reasoning)
                if stub.reasoning == "think" and reasoning:
                    message["content"] = (
                        f"<think>\n{reasoning}"
                        + ("\n</think>\n\n" if finish == "stop" or answer else "")
                        + (message["content"] or "")
                    )
                    reasoning = ""
                if not body.get("stream") or stub.ignore_stream:
                    if reasoning:
                        message[stub.reasoning] = reasoning
                    self._send(
                        200,
                        {
                            "id": f"chatcmpl-{n}",
                            "object": "chat.completion",
                            "created": int(time.time()),
                            "model": body["model"],
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                            "usage": usage,
                        },
                    )
                else:
                    self._stream_pieces(message, reasoning, usage, body, finish)
                with stub.lock:
                    stub.answered += 1

            def _stream_pieces(self, message, reasoning, usage, body, finish):
                self._settle()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                base = {
                    "id": "chatcmpl-l",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body["model"],
                }

                def chunk(delta, finish_reason=None):
                    return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

                def pieces(text, size=24):
                    return [text[i : i + size] for i in range(0, len(text), size)]

                chunks = [chunk({"role": "assistant", "content": ""})]
                chunks += [
                    chunk({stub.reasoning: p, "content": None} if stub.flavor == "vllm" else {stub.reasoning: p})
                    for p in pieces(reasoning)
                ]
                chunks += [chunk({"content": p}) for p in pieces(message.get("content") or "")]
                for i, call in enumerate(message.get("tool_calls") or []):
                    chunks.append(chunk({"tool_calls": [{"index": i, **call}]}))
                chunks.append(chunk({}, finish))
                if (body.get("stream_options") or {}).get("include_usage"):
                    chunks.append({**base, "choices": [], "usage": usage})
                for event in [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]:
                    try:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                    except OSError:  # the client hung up (a reply cut at its cap)
                        return
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        return Handler
