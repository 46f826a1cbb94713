"""A deep report's section as a run on the LangGraph server (context `section_execution:
server`): the section's loop is a run of the deployment's `section` graph on a thread of its
own, taken from the server's queue by any worker, on any machine.

- The section's thread id is derived from the parent's thread, the parent's run and the section
  task the parent's checkpoint holds (its place in the outline and what it researches). On a
  server a run keeps its id when another worker takes it up again, so a resumed parent finds the
  thread again even when it goes back further than the fan-out's checkpoint (a checkpoint the
  worker had not saved yet; `langgraph dev` keeps none once a thread's state was read): it waits
  for a run that is still going, reads the state of one that finished, and starts one only when
  the thread has none (or its worker was lost with it, as a `langgraph dev` that was killed).
  Without a server's run id (a command-line run) the task's place in the parent's checkpoint
  stands for the run: `resume` continues from that checkpoint.
- Its budget share is its run's context; its progress events are streamed back and forwarded
  tagged with the section's index; a section whose run fails is a failed section with the
  reason, as a local one.
- The texts its sources were read from are kept by the section's run under the section's
  thread; they are copied into the parent's store under the parent's label, so the parent's
  checks read them as its own (on one deployment the store is shared; two `langgraph dev`
  processes each have their own).
- The server's address is `DEEPRESEARCH_SECTION_SERVER` (set by the operator, never by a
  run's context). On a server with sign-in the requests carry a short-lived token naming the
  parent run's user (deepresearch.sections.tokens), so the section run is the owner's.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import asdict, replace
from typing import Any

import httpx

from deepresearch.sections.tokens import section_token
from deepresearch.store import ANONYMOUS, TEXTS_NAMESPACE, put_texts, run_namespace

GRAPH = "section"
RETRY_SECONDS = 0.5  # between tries to reach a section's server that did not answer
GRACE_SECONDS = 120.0  # past the section's own time budget, how long to keep trying to reach its server
_NAMESPACE = uuid.UUID("5b0f6f0e-6a57-4d6e-9a51-7d2a3c1e9f42")


class SectionServerError(RuntimeError):
    """The section's server is not configured or could not be reached in time (one line)."""


def section_server() -> str:
    url = (os.environ.get("DEEPRESEARCH_SECTION_SERVER") or "").strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise SectionServerError(
            "section_execution 'server' needs DEEPRESEARCH_SECTION_SERVER, the LangGraph server's http(s) address"
        )
    return url


def section_thread(configurable: Mapping[str, Any], inp: Mapping[str, Any], index: int) -> str:
    """The section run's thread id: the same for the same section (its index and its loop's
    input `inp`) of the same parent run, wherever and from whichever checkpoint that run resumes.
    The run is the server's run id, or, with none, the task's place in the parent's checkpoint
    (LangGraph's task path, the same on every resume of that step)."""
    parent = str(configurable.get("thread_id") or "")
    run = str(configurable.get("run_id") or configurable.get("checkpoint_ns") or "")
    task = json.dumps([index, inp], sort_keys=True, default=str)
    return str(uuid.uuid5(_NAMESPACE, f"{parent}|{run}|{task}"))


def section_headers(configurable: Mapping[str, Any], seconds: float, thread: str) -> dict[str, str]:
    """The section requests' headers: on a server with sign-in, a bearer token naming the
    parent run's user (deepresearch.sections.tokens), valid for `seconds`."""
    user = configurable.get("langgraph_auth_user_id")  # set by the LangGraph server for the run's user
    if not user or user == ANONYMOUS:
        return {}
    return {"Authorization": "Bearer " + section_token(str(user), seconds, thread)}


def _status(error: Exception) -> int | None:
    return error.response.status_code if isinstance(error, httpx.HTTPStatusError) else None


class RemoteSection:
    """One section's run on the server: `run()` gives (its final state, why it failed or None)."""

    def __init__(self, client: Any, thread_id: str, inp: dict, context: Any, forward: Callable[[dict], None]):
        self.client, self.thread_id, self.inp, self.forward = client, thread_id, inp, forward
        self.context = asdict(replace(context, section_execution="local"))
        self.deadline = time.monotonic() + float(context.max_seconds) + GRACE_SECONDS

    def run(self) -> tuple[dict, str | None]:
        while True:
            try:
                return self._once()
            except httpx.HTTPError as e:  # its worker is gone or restarting: try again
                if _status(e) not in (None, 404, 409, 502, 503, 504):
                    raise
                if time.monotonic() > self.deadline:
                    raise SectionServerError(f"the section's server did not answer in time ({type(e).__name__})") from e
                time.sleep(RETRY_SECONDS)

    def _once(self) -> tuple[dict, str | None]:
        run = self._latest_run()
        if run is None or run["status"] in ("interrupted",):  # nothing of it left, or its worker was lost
            run = self._start()
        elif run["status"] in ("pending", "running"):  # still going elsewhere: follow it
            self._follow(self.client.runs.join_stream(self.thread_id, run["run_id"], stream_mode="custom"))
            run = self.client.runs.get(self.thread_id, run["run_id"])
        if run["status"] in ("pending", "running"):  # the stream ended before the run did
            raise httpx.TransportError("the section's stream ended before its run")
        values = self.client.threads.get_state(self.thread_id).get("values") or {}
        if run["status"] != "success":
            return values, f"the section's run ended with status {run['status']}"
        return values, None

    def _latest_run(self) -> dict | None:
        try:
            self.client.threads.get(self.thread_id)
        except httpx.HTTPStatusError as e:
            if _status(e) == 404:
                return None
            raise
        runs = self.client.runs.list(self.thread_id, limit=1)
        return runs[0] if runs else None

    def _start(self) -> dict:
        self.client.threads.create(thread_id=self.thread_id, if_exists="do_nothing")
        created: dict = {}
        parts = self.client.runs.stream(
            self.thread_id,
            GRAPH,
            input=self.inp,
            context=self.context,
            stream_mode="custom",
            on_disconnect="continue",  # the parent's connection lost: the section goes on
            multitask_strategy="reject",
            on_run_created=lambda meta: created.update(meta),
        )
        self._follow(parts)
        if not created.get("run_id"):
            raise httpx.TransportError("the section's run was not created")
        return self.client.runs.get(self.thread_id, created["run_id"])

    def _follow(self, parts) -> None:
        """Forward the run's progress events (its end is read from the run's status)."""
        for part in parts:
            if part.event == "custom" and isinstance(part.data, dict):
                self.forward(part.data)


def own_texts(client: Any, values: dict) -> dict:
    """`values` with its sources' texts copied from the section's store into the parent's, and
    each source's `text_ns` the parent's label."""
    evidence = [dict(s) for s in values.get("evidence") or []]
    found: list[tuple[int, str, str, dict | None]] = []
    for i, source in enumerate(evidence):
        label = source.get("text_ns")
        if not label or not source.get("key"):
            continue
        item = client.store.get_item(list(run_namespace(TEXTS_NAMESPACE, label)), source["key"])
        value = (item or {}).get("value") or {}
        if isinstance(value.get("text"), str):
            found.append((i, source["key"], value["text"], value.get("meta")))
        else:
            source.pop("text_ns", None)  # no text to check it against
    for (i, *_), fields in zip(found, put_texts([(key, text, meta) for _, key, text, meta in found])):
        evidence[i].update(fields)
    return {**values, "evidence": evidence}
