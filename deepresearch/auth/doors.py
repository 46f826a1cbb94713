"""Refusals before anything starts, and query strings kept out of the log: the middleware of the
page's app (deepresearch/web/app.py), which the LangGraph server runs around every request,
before its own middleware (its access log included) and its auth.

With a sign-in mode on (DEEPRESEARCH_AUTH=tokens or jwt):

- a stream, command, run or websocket of a thread (or run) the caller may not read is refused
  before it starts, with the answer the API gives for reading that thread: 401 without a valid
  token, 404 for a thread or run that is not theirs or does not exist. (LangGraph alone answers
  some of these 200, then an error event, an empty stream or an error object, and accepts the
  websocket to close it; `if_not_exists: "create"` and a `run.start` command would create a
  thread with an unused id, while one that is taken by another user answers 404.)
- a thread is created with an id of the caller's choosing only if it is one they can read
  (it answers as before: 409, or the thread with `if_exists: "do_nothing"`); otherwise 403,
  whether or not the id is taken. New threads get the server's ids, so another user's thread
  id cannot be confirmed by trying it. (A deep run's section run, whose token the deployment
  signed for one thread id, creates that thread: deepresearch.sections.tokens.)

Whether the caller may read the thread is asked of the server itself: an in-process GET of the
thread (or run) with the caller's headers and address, through its own auth (a failed sign-in
is counted once, against the caller; an admin reads every thread).

In every mode, a query string's credentials (a parameter named like a token, key or password,
or a value shaped like a token) are taken out before the server sees or logs the request: the
server takes credentials from the Authorization header alone. A request the server refuses
(an answer of 400 or more) is logged without its query string.
"""

from __future__ import annotations

import json
import os
import re
from urllib.parse import parse_qsl, quote, urlencode

from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from deepresearch.sections.tokens import section_thread_of

_THREAD = r"/threads/(?P<thread>[^/]+)"
# (method, path) of the doors checked first: a run's own stream reads the run, the rest the thread
HTTP_DOORS = [
    (method, re.compile(path))
    for method, path in (
        ("GET", _THREAD + r"/runs/(?P<run>[^/]+)/stream"),
        ("GET", _THREAD + r"/stream"),
        ("POST", _THREAD + r"/stream/events"),
        ("POST", _THREAD + r"/commands"),
        ("POST", _THREAD + r"/runs(?:/stream|/wait|/crons)?"),
    )
]
WEBSOCKET_DOOR = re.compile(_THREAD + r"(?:/runs/(?P<run>[^/]+))?(?:/.*)?")
CHOSEN_ID = JSONResponse(
    {"detail": "with sign-in on, new threads get the server's ids: send no thread_id"}, status_code=403
)

# parameter names (lower case, letters and digits only) whose values are credentials
CREDENTIAL_NAMES = {
    "token",
    "accesstoken",
    "idtoken",
    "refreshtoken",
    "authtoken",
    "apitoken",
    "apikey",
    "xapikey",
    "auth",
    "authorization",
    "bearer",
    "jwt",
    "password",
    "passwd",
    "pwd",
    "secret",
    "clientsecret",
    "credential",
    "credentials",
    "session",
    "sessionid",
    "sig",
    "signature",
}
# values shaped like a credential: a scheme and token, one of `deepresearch users` (drt_), a JWT
CREDENTIAL_VALUE = re.compile(r"(?i)^\s*(?:bearer|basic)\s|drt_|eyJ[\w-]*\.[\w-]+\.")
_PROBE_DROPS = {b"content-length", b"content-type", b"transfer-encoding", b"expect", b"connection", b"upgrade"}


def sign_in_on(env=os.environ) -> bool:
    """Whether the server asks for a token (deepresearch.auth.server reads the same setting; a
    mode it does not know stops the server before any request)."""
    return (env.get("DEEPRESEARCH_AUTH") or "none").strip().lower() != "none"


def without_credentials(query: bytes) -> bytes:
    """`query` without the parameters that carry a credential (unchanged when it has none)."""
    if not query:
        return query
    pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
    kept = [
        (k, v)
        for k, v in pairs
        if re.sub(r"[^a-z0-9]", "", k.lower()) not in CREDENTIAL_NAMES and not CREDENTIAL_VALUE.search(v)
    ]
    return query if len(kept) == len(pairs) else urlencode(kept).encode("latin-1")


def _target(match: re.Match) -> str:
    """The thread (or run) a door's path names, as the path that reads it."""
    path = "/threads/" + quote(match["thread"], safe="")
    return path + "/runs/" + quote(match["run"], safe="") if match.groupdict().get("run") else path


def _section_thread(scope: Scope) -> str | None:
    """The thread a section token in the request was made for (deepresearch.sections.tokens)."""
    headers = dict(scope.get("headers") or [])
    value = headers.get(b"authorization")
    return section_thread_of(value.decode("latin-1")) if value else None


def _chosen_id(body: bytes) -> str | None:
    try:
        value = json.loads(body or b"{}")
    except ValueError:
        return None  # the API says what is wrong with it
    chosen = value.get("thread_id") if isinstance(value, dict) else None
    return str(chosen) if chosen else None


async def _whole_body(receive: Receive) -> tuple[bytes | None, Receive]:
    """The request's body (None if the client left), and a `receive` that gives it again."""
    chunks, more = [], True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return None, receive
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    body, given = b"".join(chunks), False

    async def again() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return body, again


class Doors:
    """ASGI middleware: see the module's docstring."""

    def __init__(self, app: ASGIApp, sign_in: bool | None = None):
        self.app = app
        self.sign_in = sign_in_on() if sign_in is None else sign_in

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        # a scope of our own: the access log reads its query string once the response is sent
        scope = {**scope, "query_string": without_credentials(scope.get("query_string") or b"")}
        if self.sign_in:
            refusal, receive = await self._refusal(scope, receive)
            if refusal is not None:
                return await self._refuse(scope, receive, send, refusal)
        if scope["type"] == "websocket":
            return await self.app(scope, receive, send)

        async def send_unlogged_if_refused(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                scope["query_string"] = b""
            await send(message)

        await self.app(scope, receive, send_unlogged_if_refused)

    async def _refusal(self, scope: Scope, receive: Receive) -> tuple[Response | None, Receive]:
        """The answer to give instead of going on (None: go on), and the `receive` to go on with."""
        path, method = scope["path"], scope.get("method")
        if scope["type"] == "websocket":
            match = WEBSOCKET_DOOR.fullmatch(path)
        elif method == "POST" and path == "/threads":
            body, receive = await _whole_body(receive)
            chosen = _chosen_id(body) if body is not None else None
            if chosen is None or chosen == _section_thread(scope):  # a deep run's section: its own thread
                return None, receive
            answer = await self._read_as_caller(scope, "/threads/" + quote(chosen, safe=""))
            return (None if answer.status_code == 200 else CHOSEN_ID if answer.status_code == 404 else answer), receive
        else:
            verb = "GET" if method == "HEAD" else method
            match = next(
                (m for door_verb, door in HTTP_DOORS if door_verb == verb and (m := door.fullmatch(path))), None
            )
        if match is None:
            return None, receive
        answer = await self._read_as_caller(scope, _target(match))
        return (None if answer.status_code == 200 else answer), receive

    async def _read_as_caller(self, scope: Scope, path: str) -> Response:
        """The server's answer to `GET path` from the caller of `scope` (their headers and address)."""
        probe = {k: scope[k] for k in ("app", "state", "client", "server", "root_path", "asgi") if k in scope}
        scheme = scope.get("scheme", "http")
        probe.update(
            type="http",
            http_version="1.1",
            method="GET",
            path=path,
            raw_path=path.encode(),
            query_string=b"",
            scheme={"ws": "http", "wss": "https"}.get(scheme, scheme),
            headers=[
                (k, v)
                for k, v in scope.get("headers") or []
                if k.lower() not in _PROBE_DROPS and not k.lower().startswith(b"sec-websocket-")
            ],
        )
        start: dict = {}
        chunks: list[bytes] = []
        asked = False

        async def receive() -> Message:
            nonlocal asked
            if asked:
                return {"type": "http.disconnect"}
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(probe, receive, send)
        answer = Response(b"".join(chunks), status_code=start.get("status", 500))
        answer.raw_headers = [(k, v) for k, v in start.get("headers") or [] if k.lower() != b"content-length"] + [
            (b"content-length", str(len(answer.body)).encode())
        ]
        return answer

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, answer: Response) -> None:
        if scope["type"] == "http":
            return await answer(scope, receive, send)
        if "websocket.http.response" in (scope.get("extensions") or {}):  # the handshake answered with the status
            return await WebSocket(scope, receive, send).send_denial_response(answer)
        await send({"type": "websocket.close", "code": 1008})  # a server without that extension: 403
