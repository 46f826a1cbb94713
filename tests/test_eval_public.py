"""The public evaluation set (eval/public.py, eval/public_build.py, eval/public_eval.py): how it is
built, split and typo'd, and how a report and the baselines are judged. The real sets (eval/data/) are
other projects' questions; these tests build a small set the same way from questions of our own (in the
datasets' formats), worded apart from every evaluation question. No model runs here: the measures are fed fixed
results and a stub search."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "eval"))
import generate  # noqa: E402
import public  # noqa: E402
import public_build  # noqa: E402
import public_eval  # noqa: E402

# HotpotQA's ids are 24 hexadecimal digits; its dev split is where held-out questions come from
HOTPOT_ID = re.compile(r"\b[0-9a-f]{24}\b")
# the first questions of HotpotQA's dev split (distractor setting), as its documentation shows them
HOTPOT_DEV = {
    "were scott derrickson and ed wood of the same nationality?",
    "what government position was held by the woman who portrayed corliss archer in the film kiss and tell?",
}


# questions of our own, as the datasets give theirs: what the builder keeps, it keeps by the same rules
OWN = [
    ("nq_open", "slovenia has which city as its capital", ["Ljubljana"]),
    ("nq_open", "eiffel tower was the work of which engineer", ["Gustave Eiffel"]),
    ("nq_open", "in which city is the taj mahal", ["Agra"]),
    ("nq_open", "who painted the mona lisa", ["Leonardo da Vinci"]),
    ("nq_open", "who wrote pride and prejudice", ["Jane Austen"]),
    ("nq_open", "what is the largest planet in the solar system", ["Jupiter"]),
    ("nq_open", "what is the chemical symbol for gold", ["Au"]),
    ("nq_open", "where is mount kilimanjaro", ["Tanzania"]),
    ("webquestions", "which language do people in brazil speak", ["Portuguese"]),
    ("webquestions", "who composed the magic flute", ["Wolfgang Amadeus Mozart", "Mozart"]),
    ("webquestions", "who founded microsoft", ["Bill Gates"]),
    ("webquestions", "where was napoleon born", ["Corsica"]),
    ("nq_open", "norway has which city as its capital", ["Oslo"]),
    ("nq_open", "who wrote war and peace", ["Leo Tolstoy", "Tolstoy"]),
    ("webquestions", "what river runs through cairo", ["Nile"]),
    ("webquestions", "what is the official language of mexico", ["Spanish"]),
]


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    """A set built from OWN's questions written as the datasets' files."""
    folder = tmp_path_factory.mktemp("public")
    nq = folder / "nq.jsonl"
    nq.write_text(
        "".join(json.dumps({"question": q, "answer": a}) + "\n" for d, q, a in OWN if d == "nq_open"), encoding="utf-8"
    )
    wq = folder / "wq.json"
    wq.write_text(
        json.dumps(
            [
                {"qId": f"own-{i}", "qText": q + "?", "answers": a}
                for i, (d, q, a) in enumerate(OWN)
                if d == "webquestions"
            ]
        ),
        encoding="utf-8",
    )
    out = folder / "public.json"
    assert (
        public_build.main(
            [
                "--nq-open",
                str(nq),
                "--webquestions",
                str(wq),
                "--out",
                str(out),
                "--commit",
                "nq_open=" + "0" * 40,
                "--commit",
                "webquestions=" + "1" * 40,
            ]
        )
        == 0
    )
    return out


@pytest.fixture(scope="module")
def data(data_file):
    """The set read back as `make eval` reads it."""
    return public.load(data_file)


@pytest.fixture(scope="module")
def corpus():
    return {e["title"]: e for e in generate.load()}


def test_each_question_has_its_dataset_answers_gold_and_typo(data, corpus):
    qs = data["questions"]
    assert len(qs) >= 8  # most of our questions are answerable here
    assert set(data["sources"]) == {x["dataset"] for x in qs}
    for meta in data["sources"].values():  # each dataset's licence and where it came from
        assert meta["licence"] and meta["repository"] and re.fullmatch(r"[0-9a-f]{40}", meta["commit"])
    for x in qs:
        assert x["q"] and x["answers"] and all(a.strip() for a in x["answers"]), x["id"]
        assert x["gold"] and all(g in corpus for g in x["gold"]), x["id"]
        assert x["typo"] == public.typo(x["q"]) and x["typo"] != x["q"], x["id"]
    assert len({x["id"] for x in qs}) == len({public.fold(x["q"]) for x in qs}) == len(qs)


def test_each_answer_stands_in_a_gold_article_the_question_names_or_one_it_names(data, corpus):
    c = generate.Corpus(generate.load())
    for x in data["questions"]:
        texts = [public.fold(corpus[g]["extract"]) for g in x["gold"]]
        assert any(
            re.search(r"(?<!\w)" + re.escape(public.fold(a)) + r"(?!\w)", t) for a in x["answers"] for t in texts
        )
        if x["hop"] == 0:
            assert set(x["gold"]) <= set(x["named"])
        else:  # the gold article is named by the summary of an article the question names
            linked = {t for n in x["named"] for _, _, t in c.mentions(corpus[n]["extract"])}
            assert set(x["gold"]) <= linked
        named_in_question = {t for _, _, t in c.mentions(x["q"])}
        assert set(x["named"]) <= named_in_question


def test_two_typos_in_two_words_or_two_in_one():
    q = "which engineer built the iron tower in paris"
    t = public.typo(q)
    assert t == public.typo(q) != q
    changed = [(a, b) for a, b in zip(q.split(), t.split()) if a != b]
    assert len(t.split()) == len(q.split()) and len(changed) == 2
    assert all(a[0] == b[0] and a.lower() not in public.FUNCTION_WORDS for a, b in changed)
    one = public.typo("who is obama")  # one word long enough: both typos in it
    assert one.split()[:2] == ["who", "is"] and one.split()[2] != "obama"


def test_the_split_is_a_hash_of_the_question_deterministic_and_disjoint(data):
    qs = data["questions"]
    for x in qs:
        assert x["half"] == public.half_of(x["q"]) == public.half_of(x["q"].upper() + "  ")
    dev, held = public.items(data, "dev"), public.items(data, "heldout")
    assert not {x["id"] for x in dev} & {x["id"] for x in held}
    assert len(dev) + len(held) == len(qs)
    many = [public.half_of(f"who wrote book number {i}") for i in range(2000)]
    assert 0.45 < many.count("dev") / len(many) < 0.55  # a hash halves a set
    assert all(x["q"] == x["typo"] for x in public.items(data, "heldout", typos=True))


def test_no_question_comes_from_hotpotqa(data):
    assert set(data["sources"]) <= set(public_build.SOURCES) and "hotpotqa" not in public_build.SOURCES
    for x in data["questions"]:
        dataset, split, _ = x["id"].split(":", 2)
        assert dataset == x["dataset"] and dataset in ("nq_open", "webquestions")
        assert not HOTPOT_ID.search(x["id"])
        assert public.fold(x["q"]) not in HOTPOT_DEV


def test_the_build_keeps_what_the_encyclopedia_answers_and_drops_the_rest():
    finder = public_build.Finder(generate.Corpus(generate.load()))
    item = {"dataset": "nq_open", "id": "t:1", "answers": ["Ljubljana"], "q": "slovenia has which city as its capital"}
    kept = public_build.keep(item, finder)
    assert kept and kept["gold"] == ["Slovenia"] and kept["hop"] == 0
    both = public_build.keep({**item, "q": "is the capital of croatia or of slovenia ljubljana"}, finder)
    assert both is None  # the question says the answer
    two = public_build.keep({**item, "q": "which is the capital of slovenia, as croatia's is zagreb"}, finder)
    assert two["named"] == ["Croatia", "Slovenia", "Zagreb"] and two["gold"] == ["Slovenia"]  # the one that holds it
    # an answer no article the question names (nor one they name) holds; a question naming no article
    assert public_build.keep({**item, "answers": ["Zorblat"]}, finder) is None
    assert public_build.keep({**item, "q": "zorblatia has which city as its capital"}, finder) is None
    # an answer the question says, a number any report's citations hold, one in most summaries
    assert not finder.specific("Slovenia", "slovenia has which city as its capital")
    assert not finder.specific("14", "how many countries are in opec")
    assert not finder.specific("first", "who was the first king")


class StubSearch:
    """A search backend: fixed results whatever the query."""

    def __init__(self, results):
        self.results, self.queries = results, []

    def search(self, query, k):
        self.queries.append((query, k))
        return self.results[:k]


class Hit:
    def __init__(self, title, text):
        self.title, self.text = title, text


ITEM = {
    "id": "x:1",
    "dataset": "nq_open",
    "half": "dev",
    "spelling": "as asked",
    "hop": 0,
    "q": "what currency does greece use",
    "answers": ["Euro"],
    "gold": ["Greece"],
}


def test_a_report_answers_in_its_answer_paragraph_with_the_gold_cited():
    report = (
        "# Greece\n\n## Answer\n\nGreece uses the euro [1].\n\n## Background\n\nThe drachma was older.\n\n"
        "## Sources\n\n1. Greece"
    )
    s = public_eval.score({"report": report, "sources": [{"title": "Greece"}]}, ITEM)
    assert s["answered"] and s["in_answer"] and s["gold_cited"]
    late = report.replace("Greece uses the euro [1].", "Greece is a country [1].").replace(
        "older.", "older than the euro."
    )
    s = public_eval.score({"report": late, "sources": [{"title": "Drachma"}]}, ITEM)
    assert s["answered"] and not s["in_answer"] and not s["gold_cited"]
    # no `## Answer` section: the first paragraph is the answer; whole words only ("European" is not "euro")
    plain = "# Greece\n\nGreece is in southern Europe, a European state.\n\nIt uses the euro.\n"
    s = public_eval.score({"report": plain, "sources": []}, ITEM)
    assert s["answered"] and not s["in_answer"]
    assert not public_eval.score({"report": "The European Union.", "sources": []}, ITEM)["answered"]


def test_the_hybrid_baseline_takes_any_search_backend():
    greece = Hit("Greece", "Greece is a country in southern Europe. Greece has used the euro since 2001.")
    bm25 = StubSearch([Hit("Drachma", "The drachma was the currency of Greece."), greece])
    hybrid = StubSearch([greece])
    rows = public_eval.run([ITEM], None, bm25=bm25, hybrid=hybrid, log=io.StringIO())
    assert rows[0]["hybrid_3"] and rows[0]["hybrid_gold_3"] and hybrid.queries == [(ITEM["q"], 3), (ITEM["q"], 3)]
    assert rows[0]["bm25_3"] and rows[0]["bm25_gold_3"]
    assert "answered" not in rows[0]  # no context: the baselines alone
    one = StubSearch([Hit("Drachma", "The drachma was the currency of Greece.")])
    rows = public_eval.run([ITEM], None, bm25=one, hybrid=one, log=io.StringIO())
    assert not rows[0]["bm25_5"] and not rows[0]["hybrid_gold_3"]
    assert public_eval.HYBRID[0] == "hybrid"


def test_the_bm25_rows_rank_by_words_alone_and_the_hybrid_row_by_meaning_too():
    assert public_eval._wiki().embedder is None
    assert public_eval.HYBRID[1]().embedder is not None  # the embedded MiniLM, installed by make setup


def test_the_agent_runs_per_half_and_spelling_and_held_out_questions_are_not_kept(data):
    asked = []

    def research(q, context, mode):
        asked.append((q, mode))
        return {"report": "## Answer\n\nNothing.", "sources": []}

    stub = StubSearch([])
    rows = public_eval.run_all(
        data, {"model": "local"}, limit=2, bm25=stub, hybrid=stub, research=research, log=io.StringIO()
    )
    assert len(rows) == 8 and {m for _, m in asked} == {"iterative"}
    dev = public.items(data, "dev")[:2]
    assert [q for q, _ in asked[:4]] == [x["q"] for x in dev] + [x["typo"] for x in dev]
    assert all("q" not in r for r in rows if r["half"] == "heldout") and all(
        "q" in r for r in rows if r["half"] == "dev"
    )
    table = public_eval.table(public_eval.summarize(rows))
    assert "| dev, as asked | 2 |" in table and "| heldout, typos | 2 |" in table


def test_make_eval_reports_the_public_set_and_refuses_a_bad_file(data_file, tmp_path, capsys):
    """eval/run.py --only public: the baselines on the real encyclopedia, a row per half and spelling."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("deepresearch_eval_public", Path(public.__file__).with_name("run.py"))
    ev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ev)
    assert (
        ev.main(
            [
                "--only",
                "public",
                "--public-baselines-only",
                "--public-limit",
                "2",
                "--public-half",
                "dev",
                "--public-no-typos",
                "--public-set",
                str(data_file),
            ]
        )
        == 0
    )
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| dev")]
    assert rows[0].startswith("| dev, as asked | 2 | - |") and not any("typos" in r for r in rows)
    bad = tmp_path / "set.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        ev.main(["--only", "public", "--public-set", str(bad)])
    assert stop.value.code == 2 and "--public-set" in capsys.readouterr().err


def test_the_multihop_set_keeps_two_hop_questions_only():
    """eval/multihop_build.py: a question is kept when the entry it names does not hold the answer and an
    entry that entry's summary names does (both hops in the encyclopedia); a one-hop question is not."""
    import multihop_build

    finder = public_build.Finder(generate.Corpus(generate.load()))
    item = {"dataset": "musique", "id": "musique:train:0", "answers": ["Rímac"]}
    two = multihop_build.two_hop({**item, "q": "the capital of peru sits in the valleys of which rivers"}, finder)
    assert two and two["hop"] == 1 and two["via"] == ["Peru"] and two["gold"] == ["Lima"]
    one = {**item, "answers": ["Ljubljana"], "q": "slovenia has which city as its capital"}
    assert public_build.keep(one, finder)["hop"] == 0 and multihop_build.two_hop(one, finder) is None
    assert multihop_build.two_hop({**item, "q": "zorblatia sits in the valleys of which rivers"}, finder) is None


def test_the_multihop_reader_takes_musique_rows_and_the_build_says_where_they_came_from(tmp_path):
    import multihop_build

    src = tmp_path / "train.jsonl"
    rows = [
        {"question": "the capital of peru sits in the valleys of which rivers", "answer": ["Rímac", "Rimac"]},
        {"question": "slovenia has which city as its capital", "answer": ["Ljubljana"]},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "multihop.json"
    assert multihop_build.main(["--musique", str(src), "--commit", "2" * 40, "--out", str(out)]) == 0
    data = public.load(out)
    assert [x["id"] for x in data["questions"]] == ["musique:train:0"]
    assert data["read"] == {"musique": 2} and data["answerable"] == {"musique": 1}
    meta = data["sources"]["musique"]
    assert meta["licence"] == "CC BY 4.0" and meta["commit"] == "2" * 40 and "train" in meta["path"]
    x = data["questions"][0]
    assert x["half"] == public.half_of(x["q"]) and x["typo"] == public.typo(x["q"])
    assert multihop_build.main(["--musique", str(tmp_path / "missing.jsonl"), "--out", str(out)]) == 2


def test_the_multihop_set_takes_the_two_hops_a_dataset_names():
    """Where the dataset gives a question's two supporting articles, they are its hops: both in the
    encyclopedia, the first named by the question and naming the second, the answer in the second only."""
    import multihop_build

    finder = public_build.Finder(generate.Corpus(generate.load()))
    item = {"dataset": "hotpotqa", "id": "hotpotqa:train:a", "answers": ["Rímac"]}
    q = "the capital of peru sits in the valleys of which rivers"
    two = multihop_build.two_hop({**item, "q": q, "titles": ["Peru", "Lima"]}, finder)
    assert two and two["via"] == ["Peru"] and two["gold"] == ["Lima"] and two["hop"] == 1
    # the dataset's articles, not a guess: the encyclopedia's own walk would keep it, the titles do not
    assert multihop_build.two_hop({**item, "q": q}, finder)["gold"] == ["Lima"]
    assert multihop_build.two_hop({**item, "q": q, "titles": ["Peru", "Andes"]}, finder) is None
    assert multihop_build.two_hop({**item, "q": q, "titles": ["Peru", "Zorblat City"]}, finder) is None
    # the first hop's summary does not name the second: the encyclopedia cannot walk from one to the other
    far = "which rivers run through the capital of bolivia's western neighbour"
    assert multihop_build.two_hop({**item, "q": far, "titles": ["Bolivia", "Lima"]}, finder) is None
    # both named (a comparison), or the named one holds the answer (one hop here)
    both = "does lima or peru sit in the valleys of more rivers"
    assert multihop_build.two_hop({**item, "q": both, "titles": ["Peru", "Lima"]}, finder) is None
    one = {**item, "answers": ["Ljubljana"], "q": "slovenia has which city as its capital"}
    assert multihop_build.two_hop({**one, "titles": ["Slovenia", "Ljubljana"]}, finder) is None


def test_the_multihop_reader_takes_hotpotqa_and_2wiki_rows_and_keeps_apart_what_must_stay_out(tmp_path):
    """HotpotQA's own form (a JSON list, facts as [title, sentence]) and a column-wise JSON-lines copy
    of 2WikiMultihopQA; a question of a --keep-apart file is dropped and counted, whatever its file."""
    import multihop_build

    hotpot, twowiki, apart = tmp_path / "hotpot_train.json", tmp_path / "2wiki_train.jsonl", tmp_path / "apart.jsonl"
    facts = [["Peru", 0], ["Lima", 1]]
    hotpot.write_text(
        json.dumps(
            [
                {
                    "_id": "h1",
                    "question": "the capital of peru sits in the valleys of which rivers",
                    "answer": "Rímac",
                    "supporting_facts": facts,
                    "context": [],
                },
                {
                    "_id": "h2",
                    "question": "slovenia has which city as its capital",
                    "answer": "Ljubljana",
                    "supporting_facts": [["Slovenia", 0], ["Ljubljana", 0]],
                },
            ]
        ),
        encoding="utf-8",
    )
    columns = {"title": ["Peru", "Lima", "Lima"], "sent_id": [0, 1, 2]}
    rows = [
        {
            "id": "w1",
            "question": "in the valleys of which rivers does the capital of peru sit",
            "answer": "Rímac",
            "supporting_facts": columns,
        },
        {
            "id": "w2",
            "question": "the capital of peru lies in the valleys of which rivers",
            "answer": "Rímac",
            "supporting_facts": columns,
        },
    ]
    twowiki.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    apart.write_text(json.dumps({"question": "The capital of Peru lies in the valleys of which rivers?"}) + "\n")
    out = tmp_path / "multihop.json"
    args = ["--hotpotqa", str(hotpot), "--2wikimultihopqa", str(twowiki), "--out", str(out)]
    where = ["--commit", "hotpotqa=" + "3" * 40, "--where", "hotpotqa=someone/somerepo:data/train.json"]
    assert multihop_build.main([*args, *where]) == 0
    assert {x["id"] for x in public.load(out)["questions"]} == {
        "hotpotqa:train:h1",
        "2wikimultihopqa:train:w1",
        "2wikimultihopqa:train:w2",
    }
    assert multihop_build.main([*args, *where, "--keep-apart", str(apart)]) == 0
    data = public.load(out)
    assert {x["id"] for x in data["questions"]} == {"hotpotqa:train:h1", "2wikimultihopqa:train:w1"}
    assert data["read"] == {"hotpotqa": 2, "2wikimultihopqa": 2} and data["kept_apart"] == {
        "hotpotqa": 0,
        "2wikimultihopqa": 1,
    }
    hp, tw = data["sources"]["hotpotqa"], data["sources"]["2wikimultihopqa"]
    assert hp["licence"] == "CC BY-SA 4.0" and tw["licence"] == "Apache-2.0"
    assert hp["commit"] == "3" * 40 and hp["repository"] == "someone/somerepo" and hp["path"] == "data/train.json"
    assert sum(v for k, v in data["counts"].items() if k.startswith("2wikimultihopqa")) == 1
    for x in data["questions"]:
        assert x["via"] == ["Peru"] and x["gold"] == ["Lima"] and x["half"] == public.half_of(x["q"])
    assert multihop_build.main([*args, "--commit", "nothing=1"]) == 2
    assert multihop_build.main(["--hotpotqa", str(tmp_path / "missing.json"), "--out", str(out)]) == 2
    assert multihop_build.main(["--out", str(out)]) == 2


def test_the_tables_say_how_many_iterations_runs_used_and_how_many_stopped_with_an_asked_thing_unanswered():
    """Per kind: the mean of the result's usage.iterations, and the runs whose `unanswered` is not empty."""
    results = iter(
        [
            {"report": "Euro.", "usage": {"iterations": 1}, "unanswered": []},
            {"report": "None.", "usage": {"iterations": 3}, "unanswered": [{"subject": "x", "relation": "y"}]},
            {"report": "None.", "usage": {"iterations": 2}, "unanswered": [{"subject": "z"}]},
            {"report": "Euro.", "usage": {"iterations": 2}},  # a run from before `unanswered` existed
        ]
    )
    items = [{**ITEM, "id": f"x:{i}", "hop": hop} for i, hop in enumerate((0, 1, 1, 0))]
    stub = StubSearch([])
    rows = public_eval.run(
        items, {"model": "local"}, bm25=stub, hybrid=stub, research=lambda q, c, mode: next(results), log=io.StringIO()
    )
    s = public_eval.summarize(rows)
    assert s["dev, one hop"]["iterations"] == 1.5 and s["dev, one hop"]["stopped_unanswered"] == 0
    assert s["dev, two hops"]["iterations"] == 2.5 and s["dev, two hops"]["stopped_unanswered"] == 2
    assert s["dev, as asked"]["stopped_unanswered"] == 2
    table = public_eval.table(s, name="multi-hop set")
    assert table.startswith("| multi-hop set |") and "| iterations (mean) | stopped unanswered |" in table
    assert re.search(r"^\| dev, two hops \| 2 \|.*\| 2\.5 \| 2 \| [\d.]+ \|$", table, re.M)
    # the answers set and the generated questions report the same, per kind
    import answers

    by_kind = answers.summarize(
        [
            {
                "kind": "bridge",
                "answered": True,
                "in_answer": False,
                "box3": False,
                "box5": False,
                "words": 9,
                "box3_words": 3,
                "box5_words": 5,
                "seconds": 1.0,
                **answers.loop(r),
            }
            for r in ({"usage": {"iterations": 2}, "unanswered": ["a"]}, {})  # a failed run: no iterations
        ]
    )
    assert by_kind["bridge"]["iterations"] == 2 and by_kind["bridge"]["stopped_unanswered"] == 1
    assert "| 2.0 | 1 |" in answers.table({"iterative": by_kind})


def test_make_eval_reports_the_multihop_set_and_refuses_a_bad_file(tmp_path, capsys):
    """eval/run.py --only multihop: the set's own table, a row per half and kind."""
    import importlib.util

    import multihop_build

    src, out = tmp_path / "train.jsonl", tmp_path / "multihop.json"
    src.write_text(
        json.dumps({"question": "the capital of peru sits in the valleys of which rivers", "answer": ["Rímac"]}) + "\n",
        encoding="utf-8",
    )
    assert multihop_build.main(["--musique", str(src), "--out", str(out)]) == 0
    half = public.load(out)["questions"][0]["half"]
    spec = importlib.util.spec_from_file_location("deepresearch_eval_mh", Path(public.__file__).with_name("run.py"))
    ev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ev)
    assert ev.main(["--only", "multihop", "--public-baselines-only", "--multihop-set", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| multi-hop set |" in table and f"| {half}, two hops | 1 | - |" in table
    bad = tmp_path / "set.json"
    bad.write_text("[", encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        ev.main(["--only", "multihop", "--multihop-set", str(bad)])
    assert stop.value.code == 2 and "--multihop-set" in capsys.readouterr().err
