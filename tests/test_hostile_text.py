"""hostile text that a reader or a renderer would take for a link or
that reorders what a reader sees, and values echoed whole in an error line.

- URL-like text without `//` (`https:evil.example`, `http:host/path`) is URL-like text: gone
  from report bodies (`defuse_body`) and from Sources titles (`inline_text`); ordinary colons
  stay;
- an unknown 100,000-character thread id or a 10 KB `--language` value is cut in the one
  error line (exit 2);
- `deepresearch template` keeps no URL-like text in the headings and purposes it derives.
The graph-level checks of both (a hostile page and a repeating model through the CLI) are in
tests/test_hostile_report.py.
"""

from __future__ import annotations

import re

import pytest

from deepresearch.text.safe import defuse_body, inline_text
from deepresearch.text.urls import normalize_url
from tests.helpers import cli, one_line_error
from tests.test_hostile_report import URLISH, decoded

NO_SLASHES = [
    "https:evil.example",
    "http:host/path",
    "HTTPS:EVIL.EXAMPLE/login",
    "http:\\\\evil.example",
    "ftp:files.example/x",
    "wss:evil.example:443/s",
    "javascript:void",
    "mailto:boss@evil.example",
    "xyz+web:evil.example/p",
    "https:/evil.example",
    "Https:evil.example?q=1",
    "view-source:evil.example",
]


@pytest.mark.parametrize("form", NO_SLASHES)
def test_a_scheme_and_a_colon_without_slashes_is_no_text_of_a_report(form):
    body, removed = defuse_body(f"Bees navigate along {form} routes [1].", {}, normalize_url)
    assert body == "Bees navigate along [link removed] routes [1].", body
    assert removed and removed[0]["reason"] == "not a retrieved source"
    title = inline_text(f"Bee page {form} here")
    assert title == "Bee page (link removed) here", title


@pytest.mark.parametrize(
    "text",
    [
        "The ratio is 3:1 in summer.",
        "It opened at 10:30 on 6 May 1889.",
        "Note: bees see ultraviolet light.",
        "See section 2:Design of the report.",
        "Genesis 1:3 is quoted.",
        "The score was Paris:France 2-1.",
    ],
)
def test_ordinary_colons_stay(text):
    assert defuse_body(text, {}, normalize_url)[0] == text
    assert inline_text(text) == text


def test_an_error_line_cuts_a_long_thread_id(cli_env, tmp_path):
    from deepresearch.runtime.checkpoint import open_checkpointer

    db = tmp_path / "runs.sqlite"
    with open_checkpointer(str(db)):
        pass
    long_id = "t" * 100_000
    for args in (["resume", long_id, "--db", str(db)], ["edit", long_id, "polish", "--select", "x", "--db", str(db)]):
        r = cli(args, cli_env)
        line = one_line_error(r)
        assert "unknown thread id 'ttt" in line and "…'" in line, line
        assert len(line) < 200 and "t" * 81 not in line, len(line)


def test_an_error_line_cuts_a_long_language(cli_env, tmp_path):
    language = "French " * 1500  # 10 KB
    r = cli(["How do bees navigate?", "--language", language, "--db", str(tmp_path / "runs.sqlite")], cli_env)
    line = one_line_error(r)
    assert line.startswith("deepresearch: unknown language 'French French") and "…'" in line, line[:300]
    assert len(line) < 600 and "(known: " in line, len(line)  # the advice after the value is kept


def test_an_error_line_is_bounded_whatever_its_message():
    from deepresearch.cli.common import error_line

    line = error_line("no such file: " + "/x" * 50_000 + " (and " + "word " * 2_000 + ")")
    assert len(line) <= 1000 and "\n" not in line
    assert max(map(len, line.split())) <= 200


def test_template_headings_keep_no_url_like_text(cli_env, tmp_path):
    sample = tmp_path / "sample.md"
    sample.write_text(
        "# Report on www.evil.example/login\n\n## Design at https:evil.example/x\n\n"
        "See www.host/path for it. More.\n\n## Plans for http:host/p and \u202edrow\n\n"
        "Visit //evil.example/p today.\n\n### Costs in 2024\n\nCosts rose.\n",
        encoding="utf-8",
    )
    r = cli(["template", str(sample)], cli_env)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert not URLISH.search(decoded(out)), URLISH.search(decoded(out))
    assert not re.search(r"(?i)evil|host/|\u202e", out), out
    heads = re.findall(r"(?m)^#+ .*$", out)
    assert heads == [
        "# Report on (link removed)",
        "## Design at (link removed)",
        "## Plans for (link removed) and drow",
        "### Costs in 2024",
    ], heads


def test_a_question_holding_html_is_read_for_its_text_not_its_tags(warm):
    """Concepts come from what a reader sees of the question: no `onerror alert` or `script alert`
    from its markup; `3 < 5` is no tag."""
    from deepresearch.config import Context
    from deepresearch.text.safe import markup_free
    from deepresearch.understanding import linking
    from deepresearch.understanding.embedded import concepts

    hostile = "How do bees navigate? <img src=x onerror=\"alert('q')\"><script>alert('q2')</script>"
    # the encyclopedia's titles, and no titles to link to (a web search backend)
    for backend in (linking.linking_backend(Context(model="openai:x")), None):
        found = [c["name"] for c in concepts.extract(hostile, backend)]
        assert found == [c["name"] for c in concepts.extract("How do bees navigate?", backend)]
        assert not re.search(r"(?i)alert|onerror|script|img", " ".join(found)), found
    assert markup_free(hostile) == "How do bees navigate?"
    assert markup_free("Is 3 < 5 and &lt;b&gt;7&lt;/b&gt; > 2?") == "Is 3 < 5 and 7 > 2?"
