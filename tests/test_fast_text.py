"""The research's word functions are fast paths of plain definitions: the same words out.

`fold` deletes combining marks with one `str.translate` table (filled as it goes), `tokens`
drops possessives without a regex per word, `stems` stems a list in one call, `content_overlap`
keeps each text's stems: each is checked here against the straightforward definition it
replaced."""

from __future__ import annotations

import re
import unicodedata

import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from deepresearch.embeddings.registry import embedder_for
from deepresearch.embeddings.similarity import similarity_for
from deepresearch.research import coverage
from deepresearch.text.words import fold, stems, tokens
from deepresearch.understanding.embedded import concepts
from deepresearch.understanding.embedded.hops import hops_of
from deepresearch.understanding.linking import SCAFFOLD

_stem = Stemmer.Stemmer("english").stemWord
TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)


def sim():
    """Sentences compared by meaning as the product compares them (the embedded model)."""
    return similarity_for(embedder_for("local"))


def plain_fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


def plain_tokens(text: str) -> list[str]:
    out = []
    for t in TOKEN.findall(plain_fold(text)):
        t = re.sub(r"['’]s$", "", t).replace("’", "'")
        if t:
            out.append(t)
    return out


# letters with and without accents, combining marks of several scripts, apostrophes, spaces
ALPHABET = st.sampled_from(
    list("aeiouAEIOUsSnNtT’' -.éÉüçñøÅß09_")
    + ["\u0301", "\u0308", "\u0327", "\u064b", "\u093c", "\u05b4", "\u1dc0", "\u20d7", "\ufe20", "ﬁ", "Ⅻ", "ǅ"]
)
TEXTS = st.lists(ALPHABET, max_size=40).map("".join) | st.text(max_size=40)


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_fold_and_tokens_are_the_plain_definitions(text):
    assert fold(text) == plain_fold(text)
    assert tokens(text) == plain_tokens(text)


def test_every_combining_mark_is_dropped():
    marks = "".join(chr(cp) for cp in range(0x300, 0x2000) if unicodedata.combining(chr(cp)))
    assert fold("a" + marks + "b") == plain_fold("a" + marks + "b") == "ab"
    assert tokens("Hernán Cortés’s ship, Galileo's telescope") == ["hernan", "cortes", "ship", "galileo", "telescope"]


def test_folding_learns_only_the_code_points_it_meets():
    """fold's table is filled as texts are folded: a text that is not ASCII costs no table of
    all of Unicode (that took 40-120 ms on the first such text). A new interpreter: this one's
    table holds whatever the other tests folded."""
    import subprocess
    import sys

    probe = (
        "from deepresearch.text import words as linking\n"
        "print(linking.fold('Krak\\u00f3w e\\u0301'), len(linking._COMBINING), linking._COMBINING[0x301])"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["krakow", "e", "9", "None"]  # K r a k o ◌́ w, space, e: 9 code points met, ◌́ deleted

    # a text of every code point: the same words out, and the table stops growing at its bound
    probe = (
        "import unicodedata\nfrom deepresearch.text import words as linking\n"
        "text = ''.join(chr(cp) for cp in range(0x20, 0x30000) if not 0xD800 <= cp < 0xE000)\n"
        "plain = ''.join(c for c in unicodedata.normalize('NFKD', text) if not unicodedata.combining(c)).lower()\n"
        "print(linking.fold(text) == plain, len(linking._COMBINING) == linking._COMBINING_HELD)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True"]


@given(st.lists(st.sampled_from(["running", "runs", "ran", "galileo", "nations", "generously", "a", ""])))
def test_stems_are_each_words_stem(words):
    assert stems(words) == tuple(_stem(w) for w in words)
    assert stems(iter(words)) == tuple(_stem(w) for w in words)


def plain_overlap(a: str, b: str) -> bool:
    sa = {_stem(w) for w in plain_tokens(a) if w not in concepts.STOP and w not in SCAFFOLD}
    sb = {_stem(w) for w in plain_tokens(b) if w not in concepts.STOP and w not in SCAFFOLD}
    return bool(sa & sb)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from("the tower towers Paris engineer iron how did was built of Eiffel's".split()), max_size=6
    ).map(" ".join),
    st.lists(st.sampled_from("a lattice tower in Paris iron engineers built history".split()), max_size=6).map(
        " ".join
    ),
)
def test_content_overlap_is_the_plain_definition_cached_or_not(a, b):
    assert coverage.content_overlap(a, b) == plain_overlap(a, b)
    assert coverage.content_overlap(a, b) == plain_overlap(a, b)  # the second time from the cache


def test_control_characters_are_the_unicode_category():
    from deepresearch.text import safe as safe_text

    every = "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))
    plain = "".join(" " if unicodedata.category(c) == "Cc" else c for c in every)
    assert every.translate(safe_text._CONTROL_TO_SPACE) == plain
    but_lines = "".join(c if c in "\n\t" or unicodedata.category(c) != "Cc" else " " for c in every)
    assert safe_text._CONTROL_BUT_LINE.sub(" ", every) == but_lines
    assert safe_text.one_line("a\x00b\tc\u0085d\u202ee") == "a b c de"


def test_relatedness_and_kept_stems_are_the_plain_definition():
    from deepresearch.text.words import text_stems
    from deepresearch.understanding.linking import Linker

    linker = Linker(
        ["Eiffel Tower", "Paris"], ["The Eiffel Tower is a lattice tower in Paris.", "Paris is the capital of France."]
    )
    a, b = "Gustave Eiffel's company built the tower in Paris", "The Eiffel Tower is a lattice tower in Paris."
    for _ in range(2):  # the second time from the kept stems
        assert text_stems(a) == {_stem(w) for w in plain_tokens(a)}
        sa, sb = {_stem(w) for w in plain_tokens(a)}, {_stem(w) for w in plain_tokens(b)}
        common = sum(linker.weight(x) for x in sa & sb if len(x) > 2)
        assert linker.relatedness(a, b) == common / (1 + (len(sa) * len(sb)) ** 0.5 / 4)


def test_mentions_link_plurals_and_possessives_in_every_ngram():
    from deepresearch.understanding.linking import Linker, mentions

    linker = Linker(
        ["Eiffel Tower", "Gustave Eiffel", "Iron Bridges", "Paris"],
        ["lattice tower", "engineer", "bridges of iron", "capital"] + [],
    )
    text = "Gustave Eiffel's company built the Eiffel Towers and an iron bridge near Paris."
    assert mentions(text, linker) == ["Gustave Eiffel", "Eiffel Tower", "Iron Bridges", "Paris"]
    assert mentions(text, linker, {"paris"}) == ["Gustave Eiffel", "Eiffel Tower", "Iron Bridges"]


def test_the_default_price_table_follows_the_config_folder(tmp_path, monkeypatch):
    """Its path is kept per setting: a new XDG_CONFIG_HOME or HOME is a new place to look."""
    from deepresearch.choices.prices import price_for

    first, second = tmp_path / "first", tmp_path / "second"
    (second / "deepresearch").mkdir(parents=True)
    (second / "deepresearch" / "prices.toml").write_text("[bench-model]\ninput = 1.0\noutput = 2.0\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(first))
    assert price_for("openai:bench-model") is None
    monkeypatch.setenv("XDG_CONFIG_HOME", str(second))
    assert price_for("openai:bench-model").output == 2.0
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert price_for("openai:bench-model") is None
    (tmp_path / "home" / ".config" / "deepresearch").mkdir(parents=True)
    (tmp_path / "home" / ".config" / "deepresearch" / "prices.toml").write_text(
        "[bench-model]\ninput = 1\noutput = 3\n"
    )
    assert price_for("openai:bench-model").output == 3.0  # a table written later is read


def test_kept_sentence_scores_are_the_plain_ones():
    from deepresearch.report.grounding import source_sentences
    from deepresearch.research.sentences import type_match

    text = "Gustave Eiffel built it. The tower was finished in 1889 by Eiffel's company. Short."
    first = source_sentences(text)
    first.append("changed by a caller")
    assert source_sentences(text) == ["Gustave Eiffel built it.", "The tower was finished in 1889 by Eiffel's company."]
    for _ in range(2):
        assert type_match(
            "person",
            "It was designed by Gustave Eiffel.",
            frozenset(tokens("Who was the engineer behind the Eiffel Tower?")),
        )
        assert not type_match(
            "person", "It was designed by Eiffel.", frozenset(tokens("Who was the engineer behind the Eiffel Tower?"))
        )
        assert type_match("year", "It opened in 1889.", frozenset()) and not type_match(
            "year", "It opened.", frozenset()
        )


def test_an_uncited_source_is_a_duplicate_by_its_snippets_words_kept_or_not():
    from deepresearch.provenance.chains import _marks, _why_uncited

    cited = _marks([{"title": "Tower", "snippet": "The iron lattice tower in Paris was finished in 1889."}])
    same = {"title": "Other", "snippet": "The iron lattice tower in Paris was finished in 1889 by Eiffel."}
    other = {"title": "Bridge", "snippet": "A stone bridge over the Seine river near the city."}
    for _ in range(2):  # the second time from the kept words
        assert _why_uncited(same, cited, [], "Who built the tower?") == "duplicate"
        assert _why_uncited(other, cited, [], "Who built the tower?") == "off-topic"


def plain_support(sentence: str, text: str) -> tuple[float, str]:
    """The support score by its definition: every passage of three sentences (the whole text
    when it has no more), 0.7 x the share of the sentence's words it holds + 0.3 x the share of
    its word pairs, the first best passage."""
    from deepresearch.text.citations import CITE, LABEL
    from deepresearch.text.sentences import content_words, sentences

    words = content_words(LABEL.sub("", CITE.sub("", sentence)))
    sents = sentences(text)
    if not words or not sents:
        return 0.0, ""
    pairs = set(zip(words, words[1:]))
    starts = range(0, len(sents) - 2) if len(sents) > 3 else [0]
    best, span = 0.0, ""
    for a in starts:
        passage = " ".join(sents[a : a + 3])
        pw = [w for s in sents[a : a + 3] for w in content_words(s)]
        uni = sum(1 for w in words if w in set(pw)) / len(words)
        bi = len(pairs & set(zip(pw, pw[1:]))) / len(pairs) if pairs else uni
        if 0.7 * uni + 0.3 * bi > best:
            best, span = 0.7 * uni + 0.3 * bi, passage
    return round(best, 3), span[:400]


WORDS = st.sampled_from("tower iron Paris the built design Eiffel engineer of and was 1889 fair lattice a".split())
SENTENCE = st.tuples(st.lists(WORDS, max_size=9), st.sampled_from([".", "!", "?", "", ". "])).map(
    lambda t: " ".join(t[0]) + t[1]
)


@settings(max_examples=600, deadline=None)
@given(
    st.lists(SENTENCE, max_size=9).map(" ".join),
    st.lists(SENTENCE, min_size=1, max_size=3).map(" ".join),
    st.sampled_from(["", " [1]", " **Eiffel tower** iron"]),
)
def test_support_is_the_plain_definition_over_passages(text, sentence, tail):
    """`support` reads passages from each word's sentences (bit masks): the same score and the
    same passage as the definition, pairs across a sentence boundary and ties included."""
    from deepresearch.text.citations import support

    assert support(sentence + tail, text) == plain_support(sentence + tail, text)
    assert support(sentence + tail, text) == plain_support(sentence + tail, text)  # the text's index kept


def test_a_bridge_is_read_once_per_text_and_handed_out_as_a_copy():
    from deepresearch.research import bridges as bridge_lib

    subject = {"name": "Zorblat Tower", "title": None}
    text = "The Zorblat Tower is named after the engineer Quentin Marlow, whose firm built it."
    q = "When was the engineer the Zorblat Tower was named after born?"
    before = bridge_lib._find_bridge.cache_info().hits
    hop = hops_of(q, [{"name": "Zorblat Tower", "phrase": "zorblat tower"}])[0]
    assert hop.relation == "engineer"
    first = bridge_lib.find_bridge(hop, subject, text, {"zorblat", "tower"}, sim())
    first["source"] = "changed by a caller"
    again = bridge_lib.find_bridge(hop, subject, text, {"zorblat", "tower"}, sim())
    assert bridge_lib._find_bridge.cache_info().hits == before + 1
    assert again["name"] == "Quentin Marlow" and "source" not in again
    assert again["via"] == "Zorblat Tower"  # the subject whose text named it
    assert bridge_lib.find_bridge(hop, subject, text + " Marlow was born in 1820.", {"zorblat", "tower"}, sim())


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(list("abcdeilnorstuyé’'") + ["ing", "ies", "ed"]), max_size=8).map("".join),
        max_size=12,
    ),
    st.integers(min_value=0, max_value=3),
)
def test_kept_stems_are_snowballs_stems_however_full_the_table(words, kept):
    """`stem_words` looks stems up in a table it fills: the same stems as Snowball's, in order,
    with the table empty, full, or started again mid-way."""
    from deepresearch.text import sentences as text

    saved = text.STEMS_KEPT
    text.STEMS_KEPT = kept  # a tiny table: it starts again on nearly every call
    try:
        for _ in range(2):  # the second time from the table
            assert text.stem_words(list(words)) == [_stem(w) for w in words]
            assert text.content_words(" ".join(words)) == [
                _stem(w) for w in re.findall(r"[a-z0-9]{2,}", " ".join(words).lower()) if w not in text.STOP
            ]
    finally:
        text.STEMS_KEPT = saved


def plain_no_answer(reply: str, messages) -> str | None:
    from deepresearch.llm.replies import ECHO_HEAD, _plain

    if not reply.strip():
        return "the model sent an empty reply"
    r = _plain(reply)
    if not r:
        return "the model's reply holds no words"
    for content in [str(m.content) for m in messages] + ["\n".join(str(m.content) for m in messages)]:
        said = _plain(content)
        if said and r in said and said.startswith(r[:ECHO_HEAD]) and len(r) >= min(len(said), ECHO_HEAD):
            return "the model's reply only repeats the prompt"
    return None


ECHO_WORDS = st.sampled_from(
    [
        "Write",
        "the",
        "report",
        "ΟΔΟΣ",
        "Σ",
        "Σ'",
        "σ",
        "İ",
        "a",
        "—",
        "!!",
        "\n",
        "  ",
        "sources",
        "[1]",
        "Paris",
        "ß",
        "ǅ",
    ]
)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(ECHO_WORDS, max_size=60).map(" ".join),
    st.lists(ECHO_WORDS, max_size=60).map(" ".join),
    st.integers(min_value=0, max_value=80),
    st.booleans(),
)
def test_an_echo_is_found_as_the_plain_definition_finds_it(system, user, cut, echo):
    """`no_answer` rules a message out from the plain form of its start only: the same verdict as
    reading every message whole, replies copied from a message's start (cut anywhere) included."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from deepresearch.llm.replies import no_answer

    messages = [SystemMessage(content=system), HumanMessage(content=user)]
    reply = (user if echo else system)[: cut * 3] or user
    assert no_answer(reply, messages) == plain_no_answer(reply, messages)
    assert no_answer(user + " more", messages) == plain_no_answer(user + " more", messages)


def test_a_budget_takes_the_price_its_context_read():
    """Every node's budget asks for the model's price: it is read once, when the context is made,
    and again when the context's model or price table has changed since."""
    from deepresearch.choices.prices import price_for
    from deepresearch.config import Context
    from deepresearch.llm.budget import Budget

    ctx = Context(model="openai:gpt-4o-mini")
    assert Budget.of(ctx, {}).price == price_for("openai:gpt-4o-mini") is not None
    ctx.__dict__["_price"] = (ctx.__dict__["_price"][0], "the price read with the context")
    assert Budget.of(ctx, {}).price == "the price read with the context"
    ctx.model = "openai:gpt-5-nano"  # changed after it was made: read again
    assert Budget.of(ctx, {}).price == price_for("openai:gpt-5-nano") != price_for("openai:gpt-4o-mini")


def test_an_echo_whose_start_reads_differently_cut_is_still_found():
    """The start of a message is read alone only when that cannot change what it says: a start
    whose plain form is shorter than the reply's head, or one cut right after a capital sigma
    (lower case 'ς' at a word's end, 'σ' inside one), is read whole."""
    from langchain_core.messages import HumanMessage

    from deepresearch.llm.replies import ECHO_HEAD, no_answer

    punctuated = "!" * 200 + " the instructions of the writer said back word for word by the model"
    sigma = "!" * (ECHO_HEAD * 4 - 40) + "ab " * 12 + "aΟΔΣ" + "Α and more words of the prompt follow here"
    assert len(sigma[: ECHO_HEAD * 4].replace("!", "").split()) == 13  # the cut falls right after the sigma
    for content in (punctuated, sigma):
        assert plain_no_answer(content, [HumanMessage(content=content)]) == "the model's reply only repeats the prompt"
        assert no_answer(content, [HumanMessage(content=content)]) == "the model's reply only repeats the prompt"


ODD_TEXT = st.lists(
    st.sampled_from(
        [
            "tower",
            "Iron",
            "PARIS",
            "built",
            "of",
            "a",
            "1889",
            ".",
            "!",
            "?",
            " ",
            "  ",
            "\n",
            "\t",
            "\u2028",
            "İ",
            "Σ",
            "K",
            "ß",
            "ǅ",
            "é",
            "x.",
            "end. ",
            "\u00a0",
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(ODD_TEXT, st.sampled_from(["Iron tower built in Paris", "tower iron", "1889 Paris", "a"]))
def test_support_reads_any_text_sentence_by_sentence(text, sentence):
    """The index reads the words of the lower-cased text split where `sentences` splits the
    text: the same passages as the definition's for any text (blank ends, characters whose
    lower case is longer, Unicode spaces)."""
    from deepresearch.text.citations import support

    assert support(sentence, text) == plain_support(sentence, text)


@settings(max_examples=600, deadline=None)
@given(
    st.lists(SENTENCE, max_size=9).map(" ".join) | ODD_TEXT,
    st.lists(SENTENCE, min_size=1, max_size=3).map(" ".join),
    st.sampled_from(["", " [1]", " **Eiffel tower** iron"]),
)
def test_relevance_is_supports_score_without_the_whole_index(text, sentence, tail):
    """Ranking reads only the passages holding the question's words and pairs: the same score as
    `support`, pairs across sentences (with wordless sentences between) and ties included."""
    from deepresearch.text.citations import relevance, support

    assert (
        relevance(sentence + tail, text) == support(sentence + tail, text)[0] == plain_support(sentence + tail, text)[0]
    )


@settings(max_examples=600, deadline=None)
@given(
    st.lists(SENTENCE, max_size=9).map(" ".join) | ODD_TEXT,
    st.lists(SENTENCE, min_size=1, max_size=3).map(" ".join),
    st.sampled_from(["", " [1]", " **Eiffel tower** iron"]),
)
def test_no_passage_scores_above_the_bound_from_the_texts_words(text, sentence, tail):
    """`support_bound` reads only which words a text holds: the support score by its definition
    never passes it, so a text it puts below a threshold is one `support` puts below it too."""
    from deepresearch.text.citations import support_bound

    assert plain_support(sentence + tail, text)[0] <= support_bound(sentence + tail)(text)


def test_an_unsupported_sentence_is_recited_without_indexing_texts_that_cannot_support_it():
    """`ground` re-cites a sentence its own citation does not support to the best supporting
    source. A text holding too few of the sentence's words to reach SUPPORTED anywhere is not
    scored passage by passage: its index is never built."""
    from deepresearch.report.grounding import ground
    from deepresearch.text import citations

    texts = {
        "a": "The harbour crane lifted containers all night. Ships waited outside the port.",
        "b": "The Eiffel Tower was built of puddled iron for the 1889 World's Fair in Paris. It is 330 metres tall.",
        "c": "Tower bridges open for ships. Iron rusts when wet.",
        "d": "Paris hosted the 1889 World's Fair. The Eiffel Tower was its entrance arch, built of puddled iron.",
    }
    evidence = [
        {"id": i, "key": k, "title": f"Page {k}", "url": f"https://example.org/{k}"} for i, k in enumerate(texts, 1)
    ]
    draft = "The Eiffel Tower was built of puddled iron for the 1889 World's Fair [1]."
    before = citations._passage_index.cache_info()
    text, dropped = ground(draft, evidence, lambda s: texts[s["key"]], threshold=0.25)
    assert text == "The Eiffel Tower was built of puddled iron for the 1889 World's Fair [2]." and not dropped
    # indexed: "a" (its own citation, checked first), "b" and "d"; not "c", which holds "tower" and
    # "iron" only (0.7 x 2/8 at most, below SUPPORTED)
    assert citations._passage_index.cache_info().misses - before.misses == 3


def test_a_pair_across_wordless_sentences_is_held_by_the_passages_holding_both_ends():
    from deepresearch.text.citations import relevance, support

    text = "Paris has an iron. Of the. A. Tower was built. Far away fair. Lattice design again."
    for sentence in ("iron tower", "iron tower built", "fair lattice"):
        assert relevance(sentence, text) == support(sentence, text)[0] == plain_support(sentence, text)[0]


def plain_strip_urls(text: str, replacement: str) -> str:
    from deepresearch.text.safe import _TRAILING, URL_LIKE

    def sub(m: re.Match) -> str:
        url = m.group(0).rstrip(_TRAILING)
        return replacement + m.group(0)[len(url) :]

    return URL_LIKE.sub(sub, text)


URLISH = st.lists(
    st.sampled_from(
        [
            "www.",
            "WwW.",
            "wWw.",
            "@",
            ":",
            "/",
            "//",
            "http",
            "mailto",
            "news",
            "example",
            ".com",
            ".org",
            "x.io",
            " ",
            "a",
            "b",
            "-",
            ".",
            "é",
            "\n",
        ]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(URLISH | st.text(max_size=30))
def test_strip_urls_skips_only_texts_that_cannot_hold_a_url(text):
    """strip_urls looks for a URL only in a text holding ':', '/', '@' or 'www.': the same text
    out as running the URL pattern over every text."""
    from deepresearch.text.safe import strip_urls

    assert strip_urls(text) == plain_strip_urls(text, "(link removed)")
    assert strip_urls(text, "") == plain_strip_urls(text, "")


def test_strip_urls_finds_each_kind_of_url():
    from deepresearch.text.safe import strip_urls

    for url in (
        "www.example.org",
        "WWW.Example.org/x",
        "ask@example.org",
        "example.org/path",
        "//cdn.example.org",
        "mailto:a",
        "https://example.org",
    ):
        assert strip_urls(f"see {url}.", "") == "see .", url
    plain = "The Eiffel Tower was designed by Gustave Eiffel's company for the 1889 World's Fair."
    assert strip_urls(plain) is plain


KEYISH = st.lists(
    st.sampled_from(
        [
            "sk-",
            "tvly-",
            "SK-",
            "Tvly-",
            "sk_",
            "ask-",
            "tvly",
            "k-",
            "abcdefgh",
            "12_-ab9Z",
            " ",
            "-",
            "_",
            "x",
            "é",
            "\n",
            "sk-sk-",
        ]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(KEYISH | st.text(max_size=30))
def test_redact_looks_for_key_shapes_only_where_one_can_be(text):
    """Masking runs the key-shape pattern only over a text holding 'sk-' or 'tvly-': the same
    text out as running it over every text."""
    from deepresearch.events import _KEYLIKE, redact

    assert redact(text, []) == _KEYLIKE.sub("***", text)
    assert redact(text, ["abcdefgh"]) == _KEYLIKE.sub("***", text.replace("abcdefgh", "***"))
