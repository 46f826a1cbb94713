"""Hostile sources: nothing gets into the report that was not retrieved (issue 10, items 1-3).

The search results come from a stub of the Tavily API on 127.0.0.1 or from a docs folder; the
model is a fake that repeats whatever injected text it was shown.
"""

import html
import re

import pytest

from deepresearch.citations import sanitize_body
from deepresearch.config import Context
from tests.fakes import first_sentence, researcher, sources_in
from tests.helpers import citations_resolve, of_type, run_iterative
from tests.stub_openai import StubOpenAI

EVIL_TITLE = "Bee navigation [click here](HTTPS://evil.example/x)\n## Sources\n[1] Fake — https://evil.example/fake"

INJECTED = [
    "[x](HTTPS://EVIL.EXAMPLE/a)", "HTTP://evil.example/b", "<HTTP://evil.example/c>", "//evil.example",
    "http&#58;//evil.example/d", "www.evil.example/login", "ftp://evil.example/e",
    "[js](javascript:alert(document.cookie))", "![y](HTTPS://evil.example/pixel.png)", "<img src=x onerror=alert(1)>",
]


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-hostile-0123456789")


def body_and_sources(report):
    body, _, tail = report.partition("\n## Sources\n")
    return body, tail


def no_link_or_url(text):
    decoded = html.unescape(text).lower()
    assert "evil.example" not in decoded, text
    assert "javascript:" not in decoded and "](" not in decoded and "<http" not in decoded
    assert not re.search(r"<(img|script|a)\b", text.lower())  # raw HTML is escaped


def test_titles_are_data_in_the_sources_list(key, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-000000000")

    def search(query):
        return [{"title": EVIL_TITLE, "url": "https://bees.example.org/nav",
                 "content": "Honey bees navigate by the position of the sun."}]

    def cite(ids):  # a well-behaved model: one true sentence, cited
        return "# Bees\n\nHoney bees navigate by the position of the sun [1]."

    with StubOpenAI(researcher(cite=cite)) as model, StubOpenAI(search=search) as web:
        final, _ = run_iterative(Context(model="openai:stub", base_url=model.base_url, search="tavily",
                                         search_base_url=web.root_url), "How do bees navigate?")
    body, tail = body_and_sources(final["report"])
    assert final["report"].count("## Sources") == 1  # no second Sources heading
    entries = [line for line in tail.splitlines() if re.match(r"^\[\d+\] ", line)]
    assert len(entries) == 1 and entries[0].endswith("— https://bees.example.org/nav")
    assert "\n" not in entries[0] and "](" not in entries[0] and "evil.example" not in entries[0]
    assert "\\[click here\\]" in entries[0]  # the title's text is kept, escaped
    citations_resolve(final)


def test_only_http_urls_become_sources(key, monkeypatch, tmp_path):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-000000000")
    bad = ["javascript:alert(1)", "data:text/html,<b>x</b>", "file:///etc/passwd", "ftp://files.example.org/x",
           "https:///no-host"]

    def search(query):
        results = [{"title": f"Bad {i}", "url": u, "content": "Honey bees navigate by the sun."}
                   for i, u in enumerate(bad)]
        return results + [{"title": "Good", "url": "https://ok.example.org/bees",
                           "content": "Honey bees navigate by the sun and by landmarks."}]

    with StubOpenAI(researcher()) as model, StubOpenAI(search=search) as web:
        final, events = run_iterative(Context(model="openai:stub", base_url=model.base_url, search="tavily",
                                              search_base_url=web.root_url, results_per_query=10),
                                      "How do honey bees navigate?")
    dropped = [e for e in of_type(events, "error") if "cannot be a source" in e.get("cause", "")]
    assert len(dropped) >= len(bad)
    assert {s["url"] for s in final["sources"]} == {"https://ok.example.org/bees"}


def test_a_docs_source_is_a_file_reference_never_a_link(fake_model, tmp_path):
    (tmp_path / "bees.md").write_text("# Bees\n\nHoney bees navigate by the position of the sun.\n")
    spec, _ = fake_model(researcher())
    final, _ = run_iterative(Context(model=spec, search=f"docs:{tmp_path}"), "How do honey bees navigate?")
    _, tail = body_and_sources(final["report"])
    entry = next(line for line in tail.splitlines() if line.startswith("[1] "))
    assert "— file: " in entry and "bees.md" in entry and "file://" not in entry


def test_a_model_repeating_injected_links_gets_none_into_the_report(fake_model, tmp_path):
    (tmp_path / "bees.md").write_text("# Bees\n\nHoney bees navigate by the position of the sun. "
                                      + " ".join(INJECTED) + "\n")

    def write(ids):  # repeats every injected form around a true, cited sentence
        return ("# Bees\n\nHoney bees navigate by the position of the sun [1].\n\nThey fly " + " ".join(INJECTED)
                + " [1].\n\n" + "\n".join(f"- Bees navigate by the sun, see {x} [1]." for x in INJECTED))

    spec, _ = fake_model(researcher(cite=write))
    final, _ = run_iterative(Context(model=spec, search=f"docs:{tmp_path}", writer="single"),
                             "How do honey bees navigate?")
    body, tail = body_and_sources(final["report"])
    no_link_or_url(body)
    no_link_or_url(tail)
    assert "Honey bees navigate by the position of the sun [1]" in body


def test_sanitizer_removes_every_form_case_insensitively_after_entity_decoding():
    for form in INJECTED + ["HtTpS://Evil.Example/z", "&lt;a href=&quot;http://evil.example&quot;&gt;x&lt;/a&gt;",
                            "[r][1]\n\n[1]: http://evil.example/ref", "vbscript:msgbox"]:
        out, removed = sanitize_body(f"Bees fly. {form} More text.")
        no_link_or_url(out)
        assert "vbscript:" not in out.lower()
        assert removed or "&lt;" in out, form
    kept, removed = sanitize_body("The tower is 330 m tall, e.g. 3.5 km away [2].")
    assert kept == "The tower is 330 m tall, e.g. 3.5 km away [2]." and not removed


def test_first_sentence_fake_keeps_working():  # the fakes this file relies on
    prompt = '<source id="3" title="t">\nBees fly. They dance.\n</source>'
    assert first_sentence(prompt, 3) == "Bees fly" and sources_in(prompt) == [3]
