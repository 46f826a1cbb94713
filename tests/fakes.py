"""Fake chat models at the chat-model boundary, for tests.

`ScriptedModel` answers each call with `respond(kind, prompt, call)`, where `kind` names
the structured output asked for (the schema title in the prompt, e.g. "KnowledgeGapOutput")
or "text". It behaves like a provider: it counts tokens its own way (`count_tokens`: one
token per four characters, plus a few per message, never the product's estimator) and
reports them as `usage_metadata`, honours the `max_tokens` cap by truncating the reply to
that many of its tokens, and honours `timeout` by raising TimeoutError when its latency is
longer.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

SCHEMAS = ("KnowledgeGapOutput", "AgentSelectionPlan", "ReportPlan", "Synthesis", "SupportJudgement", "ConceptProposal")


CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 3  # tokens a provider adds per message (role, separators)


def count_tokens(text: str) -> int:
    """Tokens of `text` as the fakes count them: one per four characters, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def truncate(text: str, cap: int | None) -> str:
    """`text` cut to `cap` tokens (as `count_tokens` counts them)."""
    if cap is None or count_tokens(text) <= cap:
        return text
    return text[: max(0, cap) * CHARS_PER_TOKEN]


def kind_of(prompt: str) -> str:
    """The title of the JSON schema the prompt asks for, or "text"."""
    marker = "that matches this JSON schema:\n"
    at = prompt.rfind(marker)
    if at < 0:
        return "text"
    line = prompt[at + len(marker) :].split("\n", 1)[0]
    try:
        return json.loads(line).get("title", "text")
    except ValueError:
        return "text"


def first_sentence(prompt: str, i: int) -> str:
    """The first sentence of source `i`'s block in a prompt (a writer that states what its
    sources say), without its full stop."""
    m = re.search(rf'<source id="{i}"[^>]*>\n(.*?)</source>', prompt, re.DOTALL)
    text = " ".join((m.group(1) if m else "").split())
    return re.split(r"(?<=[.!?])\s", text)[0].rstrip(".!? ") or f"Source {i}"


def sources_in(prompt: str) -> list[int]:
    return [int(n) for n in re.findall(r'<source id="(\d+)"', prompt)]


class ScriptedModel(BaseChatModel):
    respond: Any  # Callable[[str, str, int], str | Exception]
    latency: float = 0.0

    _calls: list = PrivateAttr(default_factory=list)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    @property
    def calls(self) -> list[dict]:
        return self._calls

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        prompt = "\n\n".join(str(m.content) for m in messages)
        kind = kind_of(prompt)
        with self._lock:
            n = len(self._calls)
            self._calls.append({"kind": kind, "prompt": prompt, "kwargs": {k: v for k, v in kwargs.items()}})
        timeout = kwargs.get("timeout")
        if self.latency:
            if timeout is not None and self.latency > timeout:
                time.sleep(timeout)
                raise TimeoutError(f"fake model timed out after {timeout:.2f}s")
            time.sleep(self.latency)
        out = self.respond(kind, prompt, n)
        if isinstance(out, BaseException):
            raise out
        if not isinstance(out, str):
            out = json.dumps(out)
        out = truncate(out, kwargs.get("max_tokens"))
        completion = count_tokens(out)
        prompt_tokens = sum(count_tokens(str(m.content)) + MESSAGE_OVERHEAD for m in messages)
        msg = AIMessage(
            content=out,
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": completion,
                "total_tokens": prompt_tokens + completion,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])


def researcher(
    complete_after: int = 1,
    queries: Callable[[int], list[str]] | None = None,
    cite: Callable[[list[int]], str] | None = None,
):
    """A responder that searches, judges the research complete after `complete_after`
    judgements, and writes a report citing the sources it was shown."""
    state = {"judged": 0}
    lock = threading.Lock()

    def respond(kind: str, prompt: str, n: int):
        if kind == "KnowledgeGapOutput":
            with lock:
                state["judged"] += 1
                done = state["judged"] >= complete_after
            return {"research_complete": done, "outstanding_gaps": [] if done else ["Gustave Eiffel engineer"]}
        if kind == "AgentSelectionPlan":
            qs = queries(n) if queries else ["Gustave Eiffel"]
            return {"tasks": [{"gap": q, "tool": "wiki", "query": q} for q in qs]}
        if kind == "SupportJudgement":
            return {"verdict": "supported", "span": ""}
        if kind == "ConceptProposal":
            return {"concepts": []}
        if kind == "Synthesis":
            return {"introduction": "This report answers the question.", "conclusion": "That is what was found."}
        ids = sources_in(prompt)
        if cite:
            return cite(ids)
        if "In two to four sentences" in prompt:
            return "The sources describe the tower and its engineer."
        body = " ".join(f"{first_sentence(prompt, i)} [{i}]." for i in ids[:3]) or "Nothing was found."
        return f"# Report\n\n{body}"

    return respond


def passage_of(prompt: str) -> str | None:
    """The passage a report edit asks to rewrite (None: not an edit's rewrite call)."""
    m = re.search(r"\nPassage:\n(.*?)\n\n(?:Rewrite|Improve the wording|Revise)", prompt, re.DOTALL)
    return m.group(1) if m else None


def editor(base: Callable | None = None, *, rewrite: Callable[[str, str, list[int]], str] | None = None):
    """A responder for report edits, over `base` (default: researcher()) for everything else.
    By default it rewrites a passage the way each instruction asks, using only what the
    prompt shows: expand adds each shown source's first sentence, cited; shorten keeps the
    first sentence; polish puts "In short, " in front; a supplementary rewrite adds the first
    sentence of the highest-numbered source shown (the newest), a related one the last sentence
    of the first source shown that the passage does not cite (the top new finding), cited.
    `rewrite(instruction, passage, ids)` replaces that."""
    base = base or researcher()

    def respond(kind: str, prompt: str, n: int):
        passage = passage_of(prompt) if kind == "text" else None
        if passage is None:
            return base(kind, prompt, n)
        ids = sources_in(prompt)
        instruction = prompt.split("\nPassage:\n" + passage + "\n\n", 1)[-1].split("\n", 1)[0]
        if rewrite:
            return rewrite(instruction, passage, ids)
        if "twice as long" in instruction:
            return passage + " " + " ".join(f"{first_sentence(prompt, i)} [{i}]." for i in ids)
        if "half as long" in instruction:
            return re.split(r"(?<=[.!?])\s+", passage.strip())[0]
        if "Improve the wording" in instruction:
            return "In short, " + passage[:1].lower() + passage[1:]
        newest = max(ids)
        if instruction.startswith("Revise"):  # another paragraph: the top new finding's last sentence
            top = next((i for i in ids if f"[{i}]" not in passage), newest)
            said = sentences_of(prompt, top, 9)
            return passage + (f" {said[-1]} [{top}]." if said else "")
        return passage + f" {first_sentence(prompt, newest)} [{newest}]."

    return respond


def sentences_of(prompt: str, i: int, k: int = 2) -> list[str]:
    m = re.search(rf'<source id="{i}"[^>]*>\n(.*?)</source>', prompt, re.DOTALL)
    text = " ".join((m.group(1) if m else "").split())
    return [s.rstrip(".!? ") for s in re.split(r"(?<=[.!?])\s+", text) if len(s) > 20][:k]


def paragraph_writer(base=None):
    """The report's writer: one paragraph per source shown, its first two sentences, cited."""
    base = base or researcher(complete_after=1)

    def respond(kind, prompt, n):
        if kind == "text" and "Write the report" in prompt:
            paras = [" ".join(f"{s} [{i}]." for s in sentences_of(prompt, i)) for i in sources_in(prompt)]
            return "# Report\n\n" + "\n\n".join(p for p in paras if p)
        return base(kind, prompt, n)

    return respond
