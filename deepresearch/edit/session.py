"""One edit of a finished report (node `report_feedback`): the run's state, its searches and
budget, the actions that need no rewrite by a model (fact_check, sync), and the state update
that rebuilds the report around changed spans. The model's rewrites are in
nodes/report_feedback.py, beside their prompts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from deepresearch.brief import language_of
from deepresearch.edit.actions import (
    UNVERIFIED,
    add_history,
    changed_region,
    citation_records,
    claims_of,
    mark_unsupported,
    now,
    numbered,
    renumber_new,
    repeated,
    splice,
    split_report,
)
from deepresearch.llm.budget import Budget
from deepresearch.report.verify import judge, render_report, score_citation, section_sources, source_entry, verify_draft
from deepresearch.store import full_text
from deepresearch.text.citations import CITE, normalize_citations, strip_sources_section, support, verdict
from deepresearch.text.urls import normalize_url, source_key
from deepresearch.tools.registry import primary
from deepresearch.tools.searching import run_searches

MAX_SEARCHES = 3  # fact checks: searches for claims the retrieved sources do not settle
EXTRA_RESULTS = 5  # results asked for beyond the run's results_per_query, per edit search
MAX_FINDINGS = 3  # sources a supplementary search brings into the passage at most


class Refused(Exception):
    """The edit cannot be done (budget, model failure, nothing supported): nothing changed."""


class EditRun:
    """One request's work on the run's state: searches, budget, and the state update."""

    def __init__(self, ctx, state: Mapping[str, Any], runtime):
        self.ctx, self.state, self.runtime = ctx, state, runtime
        self.evidence = list(state.get("evidence") or [])
        self.found: list[dict] = []  # sources new to the run, found by this edit's searches
        self.removed: list[dict] = []
        self.budget = Budget.of(ctx, state)

    # --- bookkeeping ------------------------------------------------------------------------
    def spent(self) -> dict[str, Any]:
        """What the edit used and found, kept whether or not it changed the report."""
        out: dict[str, Any] = {"usage": self.budget.close()}
        if self.found:  # iterative state appends new evidence; the deep graph's registry is a plain list
            out["evidence"] = self.evidence if self.state.get("drafts") is not None else self.found
        return out

    def search(self, queries: list[str]) -> list[dict]:
        """New sources for `queries` through the run's search backend (into the run's registry)."""
        # a few more results than a research query keeps: the best ones are often in the report already
        wider = replace(self.ctx, results_per_query=self.ctx.results_per_query + EXTRA_RESULTS)
        found, _errors, _done = run_searches(
            wider, self.budget, [{"query": q, "tool": primary(self.ctx)} for q in queries], self.evidence, round_no=1
        )
        first = max((int(s["id"]) for s in self.evidence), default=0) + 1
        new = [dict(s) | {"id": first + i} for i, s in enumerate(found)]
        self.evidence += new
        self.found += new
        return new

    def findings(self, query: str, passage: str) -> list[dict]:
        """Sources on `query` the report does not cite yet: what the search found new, and
        what the run had retrieved without citing it; only those about the query or the
        passage (the overlap scorer, not the model, decides), best first."""
        self.search([query])
        in_report = {s["key"] for s in numbered(self.state).values()}
        plain = CITE.sub("", passage).replace(UNVERIFIED, "")
        scored = [
            (max(support(query, text)[0], support(plain, text)[0]), s)
            for s in self.evidence
            if s["key"] not in in_report
            for text in [f"{s['title']}. {full_text(s)}"]
        ]
        relevant = [(sc, s) for sc, s in scored if sc >= self.ctx.support_threshold]
        return [s for _sc, s in sorted(relevant, key=lambda x: -x[0])][:MAX_FINDINGS]

    def view(self) -> dict:
        return {**self.state, "evidence": self.evidence}

    # --- model rewrites ---------------------------------------------------------------------
    def recorded(self, update: dict, last: dict) -> dict:
        """`update` with `last` as the last change and its record in the rewrite history."""
        record = {k: last[k] for k in ("action", "scope", "start", "end", "new_end", "related") if k in last}
        update["rewrite_history"] = add_history(self.state.get("rewrite_history") or [], record | {"at": now()})
        update["last_change"] = last
        return update

    def fact_check(self, req: dict) -> dict:
        old, start, end = req["selected_text"], req["start"], req["end"]
        cited = numbered(self.state)
        in_report = {s["key"] for s in cited.values()}
        candidates = list(cited.values()) + [s for s in self.evidence if s["key"] not in in_report]

        def best(claim: str, pool: list[dict]) -> tuple[float, str, dict | None]:
            scored = [(support(claim, f"{s['title']}. {full_text(s)}"), s) for s in pool]
            if not scored:
                return 0.0, "", None
            (score, quote), s = max(scored, key=lambda x: x[0][0])
            return score, quote, s

        claims = claims_of(old)
        results = [best(c, candidates) for _, _, c in claims]
        open_ = [i for i, r in enumerate(results) if verdict(r[0], self.ctx.support_threshold) != "supported"]
        searched = [claims[i][2][:200] for i in open_[:MAX_SEARCHES]]
        if searched:
            new = self.search(searched)
            for i in open_:
                if new:
                    again = best(claims[i][2], new)
                    if again[0] > results[i][0]:
                        results[i] = again
        verdicts = []
        marks = []
        for (_s_at, e_at, claim), (score, quote, source) in zip(claims, results):
            v = verdict(score, self.ctx.support_threshold)
            if self.ctx.verify_with_model and source is not None:
                judged = judge(self.ctx, self.budget, claim, source)
                if judged:
                    score, v, quote = judged[0], judged[1], judged[2] or quote
            ref = None
            if source is not None:
                n = next((k for k, c in cited.items() if c["key"] == source["key"]), None)
                ref = {"id": n, "title": source["title"], "url": source["url"]}
            verdicts.append({"claim": claim, "verdict": v, "score": score, "source": ref, "quote": quote})
            if v == "unsupported" and not old[e_at:].startswith(UNVERIFIED) and not old[:e_at].endswith(UNVERIFIED):
                marks.append(e_at)
        new = old
        for at in sorted(marks, reverse=True):
            new = new[:at] + UNVERIFIED + new[at:]
        update = self.apply([(start, end, new)], [])
        span = update.pop("_spans")[0]
        return self.recorded(
            update,
            {
                "action": "fact_check",
                **{k: span[k] for k in ("start", "end", "new_end")},
                "claims": verdicts,
                **({"searched": searched} if searched else {}),
            },
        )

    def sync(self, req: dict) -> dict:
        report = self.state.get("report", "")
        if req["report"] == report:
            return {"last_change": {"action": "sync", "changed": False}, "_counts": False}
        cited = numbered(self.state)
        by_key = {s["key"]: int(s["id"]) for s in self.evidence}
        url_num = {normalize_url(s["url"]): n for n, s in cited.items()}
        body, removed = normalize_citations(strip_sources_section(req["report"]).replace(UNVERIFIED, ""), url_num)

        def to_evidence(m) -> str:
            out = []
            for n in (int(x) for x in m.group(1).replace(";", ",").split(",")):
                if n in cited and cited[n]["key"] in by_key:
                    out.append(f"[{by_key[cited[n]['key']]}]")
                else:
                    removed.append({"kind": "citation", "value": f"[{n}]", "reason": f"the report has no source {n}"})
            return "".join(out)

        body = CITE.sub(to_evidence, body)
        out = verify_draft(
            body,
            self.evidence,
            self.ctx,
            self.budget,
            language_of(self.state, self.ctx),
            keep_images=self.state.get("chart_images") or (),
        )
        new_report = out["report"]
        if new_report == report:
            return {"last_change": {"action": "sync", "changed": False}, "_counts": False}
        start, end, new_end = changed_region(report, new_report)
        record = {"action": "sync", "start": start, "end": end, "new_end": new_end, "at": now()}
        self.removed += removed
        update = {
            "report": new_report,
            "sources": out["sources"],
            "citations": out["citations"],
            "report_removed": removed + out["removed"],
            "removed": list(self.state.get("removed") or []) + removed + out["removed"],
            "rewrite_history": add_history(self.state.get("rewrite_history") or [], record),
            "last_change": {"action": "sync", "start": start, "end": end, "new_end": new_end, "changed": True},
        }
        if self.state.get("drafts") is not None:
            update["sections"] = section_sources(self.state["drafts"], out["sources"], out["key_ids"])
        return update

    # --- the new report ---------------------------------------------------------------------
    def apply(self, changes: list[tuple[int, int, str]], offered: list[dict]) -> dict:
        """The state update for `changes` to the body (new sources get the next numbers; the
        Sources list and the verification line are rebuilt, the rest is left as it was)."""
        report = self.state.get("report", "")
        body, _tail = split_report(report)
        cited = numbered(self.state)
        first_new = max(cited, default=0) + 1
        used: dict[str, int] = {}
        changes = [(s, e, renumber_new(t, first_new, used, offered)) for s, e, t in changes]
        by_key = {s["key"]: s for s in offered}
        sources_by_num = dict(cited)
        for key, n in used.items():
            sources_by_num[n] = dict(by_key[key]) | {"id": n}
        old_records = list(self.state.get("citations") or [])

        def score(sent: str, n: int, source: dict) -> dict:
            return score_citation(self.ctx, self.budget, sent, n, source)

        marked = []
        for s, e, text in changes:
            fresh = citation_records(text, sources_by_num, old_records, score)
            old_records += fresh
            marked.append((s, e, mark_unsupported(text, fresh)))
        new_body, spans = splice(body, marked)
        if repeated(body, new_body):  # whatever produced the text: the report never says a thing twice
            raise Refused("the new text would repeat what the report already says")
        records = citation_records(new_body, sources_by_num, old_records, score)
        sources = list(self.state.get("sources") or []) + [
            source_entry(n, sources_by_num[n]) for n in sorted(used.values())
        ]
        removed = list(self.state.get("report_removed") or []) + self.removed
        new_report, _ = render_report(new_body, sources, records, removed, language_of(self.state, self.ctx))
        update = {
            "report": new_report,
            "sources": sources,
            "citations": records,
            "report_removed": removed,
            "removed": list(self.state.get("removed") or []) + self.removed,
            "_spans": spans,
        }
        if self.state.get("drafts") is not None:
            update["sections"] = section_sources(
                self.state["drafts"], sources, {source_key(s["url"]): s["id"] for s in sources}
            )
        return update
