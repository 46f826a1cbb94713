"""`gguf:<path>`: any chat GGUF file run in-process, shown with the packaged SmolLM2 file given by
its path: the chat template and the context window come from the file, the run is a full run
(treated as a capable model: no tiny-model shortcuts), and a bad path is one line, exit 2."""

from __future__ import annotations

import pytest

from deepresearch.config import Context, tiny_model
from deepresearch.llm.models import LocalChatModel, get_model, local_model_path
from deepresearch.runtime.runner import research
from tests.helpers import cli, one_line_error


@pytest.fixture(scope="module")
def spec():
    return f"gguf:{local_model_path()}"


def test_a_gguf_file_runs_a_research_question(spec, warm):
    ctx = Context(model=spec, max_iterations=1, max_tokens=6000, writer="extractive")
    assert ctx.context_window == 8192 and not tiny_model(ctx)  # SmolLM2's trained context, from its metadata
    model = get_model(spec)
    assert isinstance(model, LocalChatModel) and model.model_path == str(local_model_path()) and model.n_ctx == 8192
    events = []
    out = research("Who built the Eiffel Tower?", ctx, mode="iterative", on_event=events.append)
    assert out["usage"]["llm_calls"] >= 1 and out["usage"]["cost_usd"] == 0 and out["usage"]["unpriced_calls"] == 0
    assert out["report"].count("## Sources") == 1 and out["sources"]
    assert not [e for e in events if e["type"] == "error"]


def test_the_chat_template_comes_from_the_file(spec):
    llama = get_model(spec)._llama()
    assert "<|im_start|>" in llama.metadata["tokenizer.chat_template"]
    reply = get_model(spec).invoke("Say hello.", max_tokens=8)
    assert reply.usage_metadata["input_tokens"] > 0 and reply.usage_metadata["output_tokens"] > 0


def test_bad_gguf_paths_are_one_line(cli_env, tmp_path):
    (tmp_path / "notes.gguf").write_text("not a model", encoding="utf-8")
    assert "no such model file" in one_line_error(cli(["Why?", "--model", f"gguf:{tmp_path}/none.gguf"], cli_env))
    assert "not a GGUF model file" in one_line_error(cli(["Why?", "--model", f"gguf:{tmp_path}/notes.gguf"], cli_env))
    with pytest.raises(ValueError, match="needs the path"):
        Context(model="gguf:")
