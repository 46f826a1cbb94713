"""The pieces of the server's auth, without a server: the tokens file and `deepresearch users`,
JWT verification against a JWKS served on 127.0.0.1, the settings, the count of failed
attempts, and where a user's runs keep their texts in the store."""

from __future__ import annotations

import json

import jwt
import pytest

from deepresearch.auth import tokens
from deepresearch.auth.oidc import JWTConfigError, JWTSettings, JWTVerifier, TokenRefused
from deepresearch.auth.server import AuthConfigError, Failures, mode_from_env, public_without_auth
from tests.helpers import cli, one_line_error
from tests.stub_jwks import AUDIENCE, ISSUER, StubIssuer


def test_tokens_file_keeps_hashes_and_finds_users(tmp_path):
    path = tmp_path / "conf" / "tokens.json"
    alice, root = tokens.add(path, "alice"), tokens.add(path, "root", admin=True)
    assert alice.startswith("drt_") and len(alice) > 40 and alice != root
    text = path.read_text()
    assert alice not in text and root not in text and tokens.digest(alice) in text  # only hashes are kept
    assert path.stat().st_mode & 0o077 == 0  # readable by its owner only
    live = tokens.TokensFile(path)
    assert live.verify(alice) == ("alice", False) and live.verify(root) == ("root", True)
    assert live.verify(alice[:-1]) is None and live.verify("") is None
    tokens.remove(path, "alice")
    assert live.verify(alice) is None and live.verify(root) == ("root", True)  # read again when it changes
    with pytest.raises(tokens.TokensFileError, match="exists already"):
        tokens.add(path, "root")
    for bad in ("", "a.b", "has space", "x" * 65):
        with pytest.raises(tokens.TokensFileError, match="a user name is"):
            tokens.add(path, bad)
    path.write_text("{not json")
    with pytest.raises(tokens.TokensFileError, match="cannot be read"):
        tokens.load(path)


def test_users_command(tmp_path, cli_env):
    cli_env["DEEPRESEARCH_TOKENS_FILE"] = str(tmp_path / "tokens.json")
    r = cli(["users", "add", "alice"], cli_env)
    assert r.returncode == 0, r.stderr
    token = r.stdout.strip()
    assert token.startswith("drt_") and "shown once" in r.stderr and token not in r.stderr
    assert cli(["users", "add", "root", "--admin"], cli_env).returncode == 0
    listed = cli(["users", "list"], cli_env)
    assert listed.stdout.split("\n")[0].split("\t")[:2] == ["alice", "user"] and "root\tadmin" in listed.stdout
    assert token not in listed.stdout and tokens.digest(token) not in listed.stdout
    assert [u["name"] for u in json.loads(cli(["users", "list", "--json"], cli_env).stdout)] == ["alice", "root"]
    assert "exists already" in one_line_error(cli(["users", "add", "alice"], cli_env))
    assert "no user 'bob'" in one_line_error(cli(["users", "remove", "bob"], cli_env))
    assert "a user name is" in one_line_error(cli(["users", "add", "a.b"], cli_env))
    assert cli(["users", "remove", "alice"], cli_env).returncode == 0
    other = tmp_path / "other.json"
    assert cli(["users", "--file", str(other), "add", "carol"], cli_env).returncode == 0
    assert "carol" in other.read_text() and "carol" not in (tmp_path / "tokens.json").read_text()
    assert "alice" not in cli(["users", "list"], cli_env).stdout


@pytest.fixture(scope="module")
def issuer():
    with StubIssuer() as stub:
        yield stub


def test_jwts_are_verified_against_the_issuers_keys(issuer):
    verifier = JWTVerifier(JWTSettings.from_env(issuer.env()))
    assert verifier.verify(issuer.token("alice")) == ("alice", False)
    assert verifier.verify(issuer.token("root", roles=["deepresearch-admin"])) == ("root", True)
    refused = {
        "expired": (issuer.token("alice", expires_in=-120), "has expired"),
        "impostor": (issuer.token("alice", key=issuer.impostor), "signature is not valid"),
        "issuer": (issuer.token("alice", iss="https://elsewhere.example"), "another issuer"),
        "audience": (issuer.token("alice", aud="another-app"), "another audience"),
        "symmetric": (
            jwt.encode({"sub": "alice", "iss": ISSUER, "aud": AUDIENCE, "exp": 2**40}, "k" * 32, algorithm="HS256"),
            "algorithm is not accepted",
        ),
        "unsigned": (
            jwt.encode({"sub": "alice", "iss": ISSUER, "aud": AUDIENCE, "exp": 2**40}, None, algorithm="none"),
            "algorithm is not accepted",
        ),
        "malformed": ("not.a.jwt", "not a JWT"),
    }
    for _name, (token, why) in refused.items():
        with pytest.raises(TokenRefused, match=why):
            verifier.verify(token)
    assert issuer.fetches == 1  # the keys are fetched once, not per token


def test_jwt_settings_are_pinned():
    good = {
        "DEEPRESEARCH_JWT_JWKS_URL": "https://id.example/jwks",
        "DEEPRESEARCH_JWT_ISSUER": ISSUER,
        "DEEPRESEARCH_JWT_AUDIENCE": AUDIENCE,
    }
    assert JWTSettings.from_env(good).algorithms == ("RS256",)
    with pytest.raises(JWTConfigError, match="needs DEEPRESEARCH_JWT_AUDIENCE"):
        JWTSettings.from_env({k: v for k, v in good.items() if k != "DEEPRESEARCH_JWT_AUDIENCE"})
    with pytest.raises(JWTConfigError, match="asymmetric"):
        JWTSettings.from_env({**good, "DEEPRESEARCH_JWT_ALGORITHMS": "RS256,HS256"})
    with pytest.raises(JWTConfigError, match="https://"):
        JWTSettings.from_env({**good, "DEEPRESEARCH_JWT_JWKS_URL": "http://id.example/jwks"})


def test_modes_and_the_warning_for_a_public_address():
    assert mode_from_env({}) == "none" and mode_from_env({"DEEPRESEARCH_AUTH": "Tokens"}) == "tokens"
    with pytest.raises(AuthConfigError, match="use one of none, tokens, jwt"):
        mode_from_env({"DEEPRESEARCH_AUTH": "ldap"})
    assert public_without_auth("none", {"LANGGRAPH_API_URL": "http://127.0.0.1:2024"}) is None
    assert public_without_auth("tokens", {"LANGGRAPH_API_URL": "http://0.0.0.0:2024"}) is None
    warning = public_without_auth("none", {"LANGGRAPH_API_URL": "http://0.0.0.0:2024"})
    assert "WARNING" in warning and "0.0.0.0" in warning and "DEEPRESEARCH_AUTH=tokens" in warning


def test_failures_are_counted_by_client():
    failures = Failures(limit=3, window=60)
    for _ in range(2):
        failures.record("10.0.0.1")
    assert not failures.blocked("10.0.0.1")
    failures.record("10.0.0.1")
    assert failures.blocked("10.0.0.1") and not failures.blocked("10.0.0.2")
    expired = Failures(limit=3, window=0)  # failures older than the window no longer count
    for _ in range(3):
        expired.record("10.0.0.1")
    assert not expired.blocked("10.0.0.1")


def test_a_users_runs_keep_their_texts_under_their_label():
    """In a graph run that the server tags with its user (configurable langgraph_auth_user_id)."""
    from typing import TypedDict

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import StateGraph
    from langgraph.store.memory import InMemoryStore

    from deepresearch.store import put_text, stored_text

    class S(TypedDict, total=False):
        recorded: dict
        text: str

    def keep(state):
        recorded = put_text("k1", "the full text")
        return {"recorded": recorded, "text": stored_text({"key": "k1", **recorded})}

    store = InMemoryStore()
    graph = (
        StateGraph(S).add_node("keep", keep).set_entry_point("keep").compile(checkpointer=InMemorySaver(), store=store)
    )
    owned = graph.invoke({}, {"configurable": {"thread_id": "t1", "langgraph_auth_user_id": "ann.lee@example.org"}})
    assert owned == {"recorded": {"text_ns": "u:ann%2Elee@example%2Eorg/t:t1"}, "text": "the full text"}
    assert [i.namespace for i in store.search(())] == [("u:ann%2Elee@example%2Eorg", "deepresearch", "texts", "t:t1")]
    plain = graph.invoke({}, {"configurable": {"thread_id": "t2"}})  # no server user: the layout of before
    assert plain["recorded"] == {"text_ns": "t:t2"} and store.get(("deepresearch", "texts", "t:t2"), "k1")


def test_a_served_run_reads_texts_under_its_own_label_alone(tmp_path, monkeypatch):
    """The label on a source (`text_ns`) is state, which a client may write: a run reads only under
    the owner and thread of its config; another user's label, another thread's, one without an
    owner, and the file store (any key a client names) give the snippet."""
    from typing import TypedDict

    from langgraph.graph import StateGraph
    from langgraph.store.memory import InMemoryStore

    from deepresearch.store import TEXTS, TEXTS_NAMESPACE, full_text, texts_read_once

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    TEXTS.put("s0000000000f1", "a text in this machine's file store")
    (tmp_path / "secret.txt").write_text("a file of the server's")
    store = InMemoryStore()
    for owner, thread in (("u:alice", "t:ta"), ("u:bob", "t:tb"), ("u:bob", "t:other")):
        store.put((owner, *TEXTS_NAMESPACE, thread), "s1", {"text": f"text of {owner}/{thread}"})
    store.put((*TEXTS_NAMESPACE, "t:ta"), "s1", {"text": "text of t:ta"})
    sources = [
        {"key": "s1", "snippet": f"snippet {n}", "text_ns": ns}
        for n, ns in enumerate(("u:bob/t:tb", "u:alice/t:ta", "u:bob/t:other", "t:ta", "t:tb"))
    ]
    sources += [
        {"key": "s0000000000f1", "snippet": "snippet file"},
        {"key": "../../../secret", "snippet": "snippet path"},
    ]

    class S(TypedDict, total=False):
        one: list
        together: list

    def read(state):
        with texts_read_once(sources):
            together = [full_text(s) for s in sources]
        return {"one": [full_text(s) for s in sources], "together": together}

    graph = StateGraph(S).add_node("read", read).set_entry_point("read").compile(store=store)
    bob = graph.invoke(
        {}, {"configurable": {"thread_id": "tb", "langgraph_auth_user_id": "bob", "langgraph_request_id": "r1"}}
    )
    expected = [
        "text of u:bob/t:tb",
        "snippet 1",
        "snippet 2",
        "snippet 3",
        "snippet 4",
        "snippet file",
        "snippet path",
    ]
    assert bob == {"one": expected, "together": expected}
    # a served run with sign-in off: its plain label, and still not the file store
    anonymous = graph.invoke({}, {"configurable": {"thread_id": "ta", "langgraph_auth_user_id": "anonymous"}})
    assert anonymous["one"] == [
        "snippet 0",
        "snippet 1",
        "snippet 2",
        "text of t:ta",
        "snippet 4",
        "snippet file",
        "snippet path",
    ]
    # a local run (the CLI) still reads the file store by a source key, never by a path
    local = graph.invoke({}, {"configurable": {"thread_id": "tb"}})
    assert local["one"][5:] == ["a text in this machine's file store", "snippet path"]
