"""A deep run with sections as runs on servers with sign-in (the servers and the stub as in
tests/test_sections_as_runs.py, helpers in tests/sections_servers.py; this test starts its own).

- On a server with sign-in, the section runs are the owner's: hers to see, nobody else's, and
  no token of hers (nor the deployment's key) is kept in any thread.
"""

from __future__ import annotations

import json
import os
import time

import httpx
import jwt
import pytest
from langgraph_sdk import get_client

from tests.deep_helpers import DEEP_QUESTION, deep_responder
from tests.helpers import citations_resolve, cli
from tests.sections_servers import CONTEXT, go, start
from tests.stub_openai import StubOpenAI
from tests.test_resume_elsewhere import past_snippets, write_late

SECTIONS = 3  # whose runs are hers however many there are: a short deep run
SECTION_KEY = "k" * 16 + "the-deployments-own-section-key"


def test_section_runs_are_the_owners_on_a_server_with_sign_in(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("DEEPRESEARCH_")}
    env.update(HOME=str(tmp_path), DEEPRESEARCH_TOKENS_FILE=str(tmp_path / "tokens.json"))
    creds = {}
    for name in ("alice", "bob"):
        r = cli(["users", "add", name], env)
        assert r.returncode == 0, r.stderr
        creds[name] = r.stdout.strip()
    signin = {
        "DEEPRESEARCH_AUTH": "tokens",
        "DEEPRESEARCH_TOKENS_FILE": env["DEEPRESEARCH_TOKENS_FILE"],
        "DEEPRESEARCH_SECTION_KEY": SECTION_KEY,
    }
    servers = []
    try:
        sections = start(tmp_path / "sections", signin, n_jobs=SECTIONS)
        servers.append(sections)
        parent = start(tmp_path / "parent", {**signin, "DEEPRESEARCH_SECTION_SERVER": sections.url}, n_jobs=2)
        servers.append(parent)

        def as_user(url: str, who: str | None):
            return get_client(url=url, headers={"Authorization": f"Bearer {creds[who]}"} if who else {})

        with StubOpenAI(deep_responder(SECTIONS, write=write_late)) as stub:
            context = {
                **CONTEXT,
                "base_url": stub.base_url,
                "section_execution": "server",
                "max_sections": SECTIONS,
                "max_tokens": 8000 * SECTIONS,
            }

            async def alices_run():
                client = as_user(parent.url, "alice")
                tid = (await client.threads.create())["thread_id"]
                await client.runs.wait(tid, "deep", input={"question": DEEP_QUESTION}, context=context)
                history = await client.threads.get_history(tid, limit=100)
                return (await client.threads.get_state(tid))["values"], history

            values, history = go(alices_run())

        async def seen_by(who: str | None) -> list[dict]:
            client = as_user(sections.url, who)
            threads = await client.threads.search(limit=100)
            return [{**t, "states": [await client.threads.get_state(t["thread_id"])]} for t in threads]

        alices, bobs = go(seen_by("alice")), go(seen_by("bob"))
        with pytest.raises(httpx.HTTPStatusError) as anonymous:
            go(seen_by(None))
        now = int(time.time())  # a section token signed with another key names nobody
        forged = jwt.encode(
            {"sub": "alice", "aud": "deepresearch-section-run", "iss": "deepresearch", "iat": now, "exp": now + 600},
            "another-key-of-at-least-32-characters",
            algorithm="HS256",
        )
        forged_status = httpx.post(
            f"{sections.url}/threads/search", json={}, headers={"Authorization": f"Bearer {forged}"}, timeout=30
        ).status_code
    finally:
        for server in servers:
            server.stop()

    assert [s["status"] for s in values["section_results"]] == ["done"] * SECTIONS, values["section_results"][0][
        "reason"
    ]
    assert citations_resolve(values) and all(c["verdict"] == "supported" for c in values["citations"])
    assert len(past_snippets(values["citations"], values["evidence"])) >= 1  # the texts, read as hers
    assert len(alices) == SECTIONS and all(t["metadata"]["owner"] == "alice" for t in alices)
    assert bobs == [] and anonymous.value.response.status_code == 401 and forged_status == 401
    kept = json.dumps([values, history, alices], default=str)
    assert creds["alice"] not in kept and SECTION_KEY not in kept and "eyJ" not in kept
