"""The LangGraph server's auth (langgraph.json: "auth": {"path": ".../server.py:auth"}).

The mode is read from the environment when the server starts:

    DEEPRESEARCH_AUTH=none     anyone who reaches the server sees every thread (the default)
    DEEPRESEARCH_AUTH=tokens   a bearer token from the tokens file (`deepresearch users add NAME`)
    DEEPRESEARCH_AUTH=jwt      a bearer JWT from an OIDC issuer (DEEPRESEARCH_JWT_* settings)

With a mode on, every request but the page's static files carries `Authorization: Bearer
<token>`; a missing or refused one is answered 401 with one line. Each thread, run, assistant
and cron a user creates is stamped with `owner` in its metadata, and every read, search,
update, stream and delete is filtered by it, so another user's thread answers 404 as if it did
not exist (its streams, commands and websocket before they start: deepresearch.auth.doors). The store is split by user: a namespace always begins with the user's label
(`deepresearch.store.owner_label`), where their runs keep their sources' texts. An
admin (a flag in the tokens file, a role in the JWT) reads and lists everything.

A deep run's section runs (`section_execution: server`) carry a token the deployment signed
with `DEEPRESEARCH_SECTION_KEY` naming the run's user (deepresearch.sections.tokens): they are
that user's, with no admin right.

A client (its address, or the address a proxy on this machine forwards) that fails
`MAX_FAILURES` times within `FAILURE_WINDOW` seconds is refused without its token being looked
at until the oldest failure ages out: guessing tokens is slowed down to a few a minute.
Tokens are never logged, stored or put in a message: the user the server records is the name
or subject alone.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections import defaultdict, deque
from urllib.parse import urlsplit

from langgraph_sdk import Auth

from deepresearch.auth.oidc import IssuerUnreachable, JWTConfigError, JWTSettings, JWTVerifier, TokenRefused
from deepresearch.auth.tokens import TokensFile, TokensFileError, default_path
from deepresearch.sections.tokens import section_user
from deepresearch.store import ANONYMOUS, owner_label

MODES = ("none", "tokens", "jwt")
MAX_FAILURES = int(os.environ.get("DEEPRESEARCH_AUTH_MAX_FAILURES", "10"))
FAILURE_WINDOW = 60.0
OWNER = "owner"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
log = logging.getLogger("deepresearch.auth")


class AuthConfigError(ValueError):
    """DEEPRESEARCH_AUTH or its settings are not valid (one line)."""


def mode_from_env(env=os.environ) -> str:
    mode = (env.get("DEEPRESEARCH_AUTH") or "none").strip().lower()
    if mode not in MODES:
        raise AuthConfigError(f"DEEPRESEARCH_AUTH={mode!r}: use one of {', '.join(MODES)}")
    return mode


def public_without_auth(mode: str, env=os.environ) -> str | None:
    """The warning to print when the server listens beyond this machine with no auth."""
    host = urlsplit(env.get("LANGGRAPH_API_URL") or "").hostname or ""  # set by `langgraph dev`
    if mode != "none" or not host or host in LOCAL_HOSTS:
        return None
    return (
        f"deepresearch: WARNING: the server listens on {host} with DEEPRESEARCH_AUTH=none: anyone who can "
        "reach it can read, edit and delete every thread; set DEEPRESEARCH_AUTH=tokens or jwt"
    )


class Failures:
    """Failed attempts by client, within the last FAILURE_WINDOW seconds."""

    def __init__(self, limit: int = MAX_FAILURES, window: float = FAILURE_WINDOW):
        self.limit, self.window = limit, window
        self.seen: dict[str, deque] = defaultdict(deque)

    def _recent(self, client: str) -> deque:
        times, cut = self.seen[client], time.monotonic() - self.window
        while times and times[0] < cut:
            times.popleft()
        return times

    def blocked(self, client: str) -> bool:
        return client in self.seen and len(self._recent(client)) >= self.limit

    def record(self, client: str) -> None:
        self._recent(client).append(time.monotonic())
        if len(self.seen) > 10_000:  # forget the clients whose failures have all aged out
            for key in [k for k in self.seen if not self._recent(k)]:
                del self.seen[key]


try:
    MODE = mode_from_env()
    _jwt = JWTVerifier(JWTSettings.from_env()) if MODE == "jwt" else None
except (AuthConfigError, JWTConfigError) as e:  # the server does not start open by mistake
    print(f"deepresearch: the server cannot start: {e}", file=sys.stderr, flush=True)
    raise SystemExit(2) from None
if warning := public_without_auth(MODE):
    print(warning, file=sys.stderr, flush=True)
_tokens = TokensFile(default_path()) if MODE == "tokens" else None
_failures = Failures()

auth = Auth()


def _refuse(message: str) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=401, detail=message, headers={"WWW-Authenticate": "Bearer"})


def _check(token: str) -> tuple[str, bool]:
    """(user, is admin) for a valid token (blocking: a file or the issuer's keys may be read)."""
    if _jwt is not None:
        return _jwt.verify(token)
    if _tokens is None:  # not reached: `authenticate` asks for no token in the mode that has none
        raise TokenRefused("the server checks no tokens")
    try:
        found = _tokens.verify(token)
    except TokensFileError as e:
        log.error("deepresearch: %s", e)
        raise TokenRefused("the server cannot check tokens now") from None
    if found is None:
        raise TokenRefused("the token is not valid")
    return found


@auth.authenticate
async def authenticate(authorization: str | None, scope: dict) -> Auth.types.MinimalUserDict:
    if MODE == "none":
        return {"identity": ANONYMOUS, "is_authenticated": False, "permissions": []}
    client = (scope.get("client") or ("unknown",))[0]
    if _failures.blocked(client):
        raise _refuse("too many failed attempts from this address: try again in a minute")
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        _failures.record(client)
        raise _refuse("sign in: send 'Authorization: Bearer <token>'")
    if (delegated := section_user(token)) is not None:  # a deep run's section run, for its owner
        return {"identity": delegated, "display_name": delegated, "is_authenticated": True, "permissions": []}
    try:
        user, admin = await asyncio.to_thread(_check, token)
    except IssuerUnreachable:
        log.warning("deepresearch: the JWT issuer's keys cannot be fetched")
        raise _refuse("the token cannot be checked now: try again later") from None
    except TokenRefused as e:
        _failures.record(client)
        raise _refuse(str(e)) from None
    return {"identity": user, "display_name": user, "is_authenticated": True, "permissions": ["admin"] if admin else []}


def _is_admin(ctx: Auth.types.AuthContext) -> bool:
    return MODE == "none" or "admin" in (ctx.permissions or [])


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: dict):
    """Threads, runs, assistants and crons: stamped on create, filtered by owner on the rest."""
    if MODE == "none":
        return None
    if ctx.action in ("create", "create_run", "update"):
        # the creator is the owner, and nobody hands an item to another user or passes one off
        # as the server's own (its graphs' assistants are "created_by": "system"). The dict is
        # changed in place: the server goes on with the same one.
        metadata = value.get("metadata")
        if ctx.action != "update" and not isinstance(metadata, dict):
            metadata = value["metadata"] = {}
        if isinstance(metadata, dict):
            metadata.pop("created_by", None)
            metadata.pop(OWNER, None)
            if ctx.action != "update":
                metadata[OWNER] = ctx.user.identity
    if _is_admin(ctx):
        return None
    mine = {OWNER: ctx.user.identity}
    if ctx.resource == "assistants" and ctx.action in ("read", "search"):
        return {"$or": [mine, {"created_by": "system"}]}  # the graphs of langgraph.json serve everyone
    return mine


@auth.on.store()
async def own_namespace(ctx: Auth.types.AuthContext, value: dict):
    """A user's store namespaces all begin with their label: one that does not is read as a
    namespace under theirs, so another user's items are simply not there."""
    if MODE == "none" or _is_admin(ctx):
        return None
    me = owner_label(ctx.user.identity)
    ns = tuple(value.get("namespace") or ())
    if not ns or ns[0] != me:
        value["namespace"] = (me, *ns)
    return None
