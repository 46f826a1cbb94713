"""What keeps a docs folder's first question small in memory (issue 69: within 500 MB on the LaTeX
manuals; the figure is measured by bench/docs_memory.py, not asserted here): the embedded model
reads a page by its first words only, and runs a bounded number of tokens at once.
"""

from __future__ import annotations

import numpy as np
import pytest

from deepresearch.embeddings.minilm import BATCH_TOKENS, MAX_TOKENS, MiniLM


class Spy:
    """Passes every call to the object it wraps, and keeps what `method` was given."""

    def __init__(self, inner: object, method: str):
        self.inner, self.method, self.seen = inner, method, []

    def __getattr__(self, name: str):
        found = getattr(self.inner, name)
        if name != self.method:
            return found

        def call(*args, **kwargs):
            self.seen.append((args, kwargs))
            return found(*args, **kwargs)

        return call


@pytest.fixture(scope="module")
def model():
    return MiniLM()


def test_a_page_is_tokenized_by_its_first_words_and_gets_the_whole_pages_ids(model):
    words = "Harbour pilots guide ferries past the granite reef at dawn, twice a day."
    pages = [
        " ".join([words] * 80),  # about a thousand words
        "\n".join(f"{n}. {words}" for n in range(60)),
        "\x00 " * 300 + words,  # first words the tokenizer drops: the whole page is read
        "Short: " + words,
        "",
    ]
    whole = [e.ids for e in model.tokenizer.encode_batch(pages)]
    spy = Spy(model.tokenizer, "encode_batch")
    model.tokenizer = spy
    try:
        got = model.tokens(pages)
    finally:
        model.tokenizer = spy.inner
    assert got == whole
    assert all(len(ids) <= MAX_TOKENS for ids in got) and len(got[0]) == MAX_TOKENS
    # the long pages went to the tokenizer as their first MAX_TOKENS words, never whole
    first = spy.seen[0][0][0]
    assert [len(t.split()) for t in first[:2]] == [MAX_TOKENS, MAX_TOKENS]
    assert not any(pages[0] in texts or pages[1] in texts for (texts,), _ in spy.seen)


def test_the_model_runs_a_bounded_number_of_tokens_at_once_and_each_text_gets_its_own_vector(model):
    sentence = "The lighthouse keeper trims the lamp before the storm reaches the coast. "
    texts = [sentence * n for n in (1, 1, 2, 3, 5, 8, 13, 20)] + [f"Buoy {n} marks the channel." for n in range(40)]
    spy = Spy(model.session, "run")
    model.session = spy
    try:
        vectors = model.encode(texts, batch=64)
    finally:
        model.session = spy.inner
    shapes = [kwargs.get("input_feed", args[1])["input_ids"].shape for args, kwargs in spy.seen]
    assert all(rows * width <= BATCH_TOKENS or rows == 1 for rows, width in shapes), shapes
    assert max(rows for rows, _ in shapes) > 4  # short texts still go many at once
    alone = np.vstack([model.encode([t]) for t in texts])
    assert np.allclose(vectors, alone, atol=1e-5)
