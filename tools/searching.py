"""Running searches: each task through its tool's backend, concurrently within the loop's
time, results deduplicated by URL and by identifier (PMID, DOI, NCT id, arXiv id) into the
run's source registry. Node `execute_tools` runs a round of them; an edit of a finished report
runs its own searches through the same function.
"""

from __future__ import annotations

import time
from concurrent.futures import wait

from deepresearch.choices.controls import allowed
from deepresearch.embeddings.registry import embedder_of
from deepresearch.embeddings.similarity import Similarity, similarity_for
from deepresearch.events import emit, unsaid
from deepresearch.llm.budget import Budget
from deepresearch.llm.retries import describe
from deepresearch.pacing import pacer
from deepresearch.store import put_texts
from deepresearch.text.safe import one_line, reference_kind
from deepresearch.text.urls import snippet, source_key
from deepresearch.tools.base import SearchResult, search_deadline
from deepresearch.tools.registry import backend_for, done_key, primary
from deepresearch.worker_threads import KeptThreads

DEDUP_IDS = ("PMID", "PMCID", "DOI", "NCT", "arXiv")
OPENING = 240  # characters of a result's text compared with the query: its title and first sentence or two
SEARCHERS = KeptThreads("search")  # the searches' threads, kept from one round to the next
LATE = "search did not finish within the time budget"
# a search task, with what its search found (None when it failed) and why it failed (None when it did not)
Outcome = tuple[dict, list[SearchResult] | None, str | None]


def reranked(query: str, results: list, sim: Similarity) -> list:
    """`results` by how close their title and opening are in meaning to `query` (the backend's own order
    breaks ties). The opening, not the whole text: the embedder's time grows with the words it reads,
    and a run embeds every result of every search."""
    if len(results) < 2:
        return list(results)
    scores = sim.scores(query, [_opening(r) for r in results])
    return [
        r for _, _, r in sorted(((-sc, i, r) for i, (sc, r) in enumerate(zip(scores, results))), key=lambda x: x[:2])
    ]


def _opening(r: SearchResult) -> str:
    return f"{r.title}. {r.text[:OPENING]}"


def reranked_round(searches: list[tuple[str, list]], sim: Similarity) -> list[list]:
    """Each search's (query, results) by `reranked`, every text of the round encoded in one call (a
    batch is cheaper than a call a search, and the scores are then read from the kept vectors)."""
    if sim.embedder is not None:
        texts = [text for query, results in searches if len(results) > 1 for text in (query, *map(_opening, results))]
        if texts:
            sim.vectors(texts)
    return [reranked(query, results, sim) for query, results in searches]


def _idents(ids: dict | None) -> set[tuple[str, str]]:
    return {(k, str(v).lower()) for k, v in (ids or {}).items() if k in DEDUP_IDS and v}


def _keep_closest(ctx, outcomes: list[Outcome], backends: dict, first: str) -> list[Outcome]:
    """The web's, a specialist source's or an MCP tool's results, where a search returned more than
    are kept: the closest in meaning among those that can be sources (the rest are dropped later,
    each with an event), ranked for the whole round at once. A backend that ranks by meaning itself
    (the encyclopedia, a docs folder) keeps its order; a search that returned no more than are kept
    keeps the backend's order, and nothing is encoded for it."""
    ranked: list[int] = []
    for n, (task, results, _error) in enumerate(outcomes):
        backend = backends.get(task.get("tool") or first)
        if results is None or backend is None or getattr(backend, "embedder", None) is not None:
            continue
        if sum(reference_kind(r.url, r.backend) is not None for r in results) > ctx.results_per_query:
            ranked.append(n)
    if not ranked:
        return outcomes
    sim = similarity_for(embedder_of(ctx))
    searches = []
    for n in ranked:
        results = outcomes[n][1] or []
        searches.append((outcomes[n][0]["query"], [r for r in results if reference_kind(r.url, r.backend) is not None]))
    out = list(outcomes)
    for n, (_query, _linkable), closest in zip(ranked, searches, reranked_round(searches, sim)):
        task, results, error = outcomes[n]
        unlinkable = [r for r in results or [] if reference_kind(r.url, r.backend) is None]
        out[n] = (task, closest[: ctx.results_per_query] + unlinkable, error)
    return out


def run_searches(
    ctx,
    budget: Budget,
    tasks: list[dict],
    evidence: list[dict],
    *,
    round_no: int,
    section: str | None = None,
    report_skipped: bool = True,
) -> tuple[list[dict], list[dict], list[str]]:
    """Run `tasks` ({query, tool?, gap?}) and register what they find after `evidence`:
    (the new sources, numbered on from `evidence`; the failed searches; the tasks' done keys).
    `report_skipped`: say once which files a documents backend could not read (an `error`
    event marked `warning` per file: the run goes on without them)."""
    errors: list[dict] = []
    first = primary(ctx)
    backends, broken = {}, {}
    for name in dict.fromkeys(t.get("tool") or first for t in tasks):
        try:
            with search_deadline(time.monotonic() + budget.loop_seconds_left()):  # an MCP listing, if not kept
                backends[name] = backend_for(ctx, name)
        except ValueError as e:  # a bad search spec from a context that skipped the CLI's checks
            broken[name] = str(e)
            emit("error", node="execute_tools", tool=name, cause=str(e))
            continue
        if report_skipped:  # a documents backend's unreadable files: a warning line each, once a run
            for line in unsaid(("skipped", name), getattr(backends[name], "skipped", None) or []):
                emit(
                    "error", node="execute_tools", tool=name, warning=True, cause=f"skipped an unreadable file: {line}"
                )

    def run(task: dict, deadline: float) -> Outcome:
        name = task.get("tool") or first
        if name in broken:
            return task, None, broken[name]
        backend = backends[name]
        try:
            with (
                search_deadline(deadline),
                pacer("search", backend.name, ctx.search_concurrency, ctx.search_rpm).slot(),
            ):
                if time.monotonic() >= deadline:  # its turn came too late: the node has moved on
                    return task, None, LATE
                # as many as are kept: asking for more, to keep the closest in meaning, was measured to
                # cost more than it changed (docs/embeddings.md); a later page of a query done before
                # (`page`: a gap its first results left open) keeps only the results after those
                page = task.get("page", 0)
                results = backend.search(task["query"], ctx.results_per_query * (page + 1))
                results = results[ctx.results_per_query * page :]
            # the run's domains hold whatever the backend did with them (deepresearch.choices.controls)
            kept = [r for r in results if allowed(r.url, ctx.include_domains, ctx.exclude_domains)]
            outside = len(results) - len(kept)
        except Exception as e:  # noqa: BLE001 - a failed search is skipped, never fatal
            emit("error", node="execute_tools", tool=backend.name, cause=describe(e), query=task["query"])
            return task, None, describe(e)
        linkable = sum(reference_kind(r.url, r.backend) is not None for r in kept)
        emit(
            "search_complete",
            query=task["query"],
            tool=backend.name,
            results=len(kept) - linkable + min(linkable, ctx.results_per_query),
            **({"outside_domains": outside} if outside else {}),
        )
        return task, kept, None

    # searching spends the loop's time too: none when its share is gone, and no waiting past it
    window = budget.loop_seconds_left()
    if tasks and window <= 0.2:
        # no event: the loop's stop says it, once (node knowledge_gap), when the time is spent
        tasks = []
    outcomes: list[Outcome] = []
    if tasks:  # all at once: the search pacer holds them to `search_concurrency`
        deadline = time.monotonic() + window
        for t in tasks:  # announced together, as they are handed to their threads (a broken backend has none)
            if backend := backends.get(t.get("tool") or first):
                emit("searching", query=t["query"], tool=backend.name)
        futures = [SEARCHERS.submit(run, t, deadline) for t in tasks]
        done, _late = wait(futures, timeout=window)  # a search still running is left behind
        for t, f in zip(tasks, futures):
            outcome = f.result() if f in done else (t, None, LATE)
            if outcome[2] == LATE:
                emit("error", node="execute_tools", tool=t.get("tool") or first, cause=LATE, query=t["query"])
            outcomes.append(outcome)
        outcomes = _keep_closest(ctx, outcomes, backends, first)

    evidence = list(evidence)
    known = len(evidence)
    seen_keys = {s["key"] for s in evidence}
    seen_ids = set().union(*(_idents(s.get("ids")) for s in evidence))
    found: list[tuple[dict, SearchResult, str]] = []  # (task, result, key) of each new source, in order
    for task, results, error in outcomes:
        if error:
            errors.append(
                {"node": "execute_tools", "cause": error, "query": task["query"], "tool": task.get("tool") or first}
            )
            continue
        for r in results or []:
            if reference_kind(r.url, r.backend) is None:  # javascript:, data:, ftp:, no host…
                emit(
                    "error",
                    node="execute_tools",
                    tool=r.backend,
                    query=task["query"],
                    cause=f"dropped a result whose URL is not http(s): {one_line(r.url, 80)!r}",
                )
                continue
            key = source_key(r.url)
            idents = _idents(r.ids)
            if key in seen_keys or not r.text.strip() or idents & seen_ids:
                continue
            found.append((task, r, key))
            seen_keys.add(key)
            seen_ids |= idents
    # the texts go to the run's store (or, without one, the local file store) in one request
    kept_all = put_texts([(key, r.text, r.meta) for _, r, key in found])
    for (task, r, key), kept in zip(found, kept_all):
        source = {
            "id": len(evidence) + 1,
            "key": key,
            "title": r.title,
            "url": r.url,
            "backend": r.backend,
            "snippet": snippet(r.text),
            "query": task["query"],
            **kept,
            # where it came from, for provenance (deepresearch.provenance.chains)
            "round": round_no,
            "gap": task.get("gap") or "",
            **({"section": section} if section else {}),
        }
        if r.ids:
            source["ids"] = dict(r.ids)
        if r.meta:  # authors, year, venue…: what citation styles and bibliographies use
            source["meta"] = dict(r.meta)
        evidence.append(source)
    return (
        evidence[known:],
        errors,
        [done_key(t.get("tool") or first, t["query"], first, t.get("page", 0)) for t in tasks],
    )
