"""The web page, mounted on the LangGraph server by langgraph.json's `http.app`.

    GET  /ui/                              the page (static HTML, CSS and JavaScript of this package)
    POST /ui/api/view                      a run's output values -> the report as safe HTML + its citations
    POST /ui/api/check                     a run's context -> {"error": one line} or {"ok": true} (web/checks.py)
    GET  /ui/api/sources                   the search sources this server offers (web/checks.py's offered_sources)
    POST /ui/api/export?format=md|html|docx|pdf|bibtex|ris|csljson   a run's output values -> the report (or its bibliography) as a file
    any other path under /ui/                404 (LangGraph's own /ui files are not served)

The page talks to the server's own API (threads, runs, streaming, interrupts) as the person
using it, auth included; these routes only render the values it sends and read no thread
themselves (the SDK's in-process client would bypass the server's auth), so they hold nothing
and can show nobody anything they could not read already. With a sign-in mode on
(deepresearch/auth/server.py), they ask for the same token as the API (langgraph.json's
`http.enable_custom_route_auth`); only the page's own files (GET) are served to anyone.
The app's middleware (deepresearch.auth.doors) runs around every request of the server.
"""

from __future__ import annotations

import json
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from deepresearch.auth.doors import Doors
from deepresearch.web.checks import context_problem, offered_sources
from deepresearch.web.export import EXTENSIONS, FORMATS, ExportError, export
from deepresearch.web.render import view

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 32 * 1024 * 1024  # a run's output values, as the page sends them
# the page's policy: its own scripts and styles only; a tag that slipped into the report runs nothing
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


def _secure(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


class BadRequest(ValueError):
    pass


async def _values(request: Request) -> dict:
    body = await request.body()
    if len(body) > MAX_BODY:
        raise BadRequest("the values are too large")
    try:
        values = json.loads(body or b"{}")
    except ValueError:
        raise BadRequest("the body is not JSON") from None
    if not isinstance(values, dict):
        raise BadRequest("expected a run's output values (a JSON object)")
    return values


async def index(request: Request) -> Response:
    return _secure(FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8"))


async def report_view(request: Request) -> Response:
    try:
        values = await _values(request)
    except BadRequest as e:
        return JSONResponse({"error": str(e)}, status_code=400)
    out = await run_in_threadpool(view, values)
    out.update(rewrite_history=values.get("rewrite_history") or [])
    return _secure(JSONResponse(out))


async def check_context(request: Request) -> Response:
    try:
        context = await _values(request)
    except BadRequest as e:
        return JSONResponse({"error": str(e)}, status_code=400)
    problem = await run_in_threadpool(context_problem, context)  # a docs folder is read: off the event loop
    return _secure(JSONResponse({"error": problem} if problem else {"ok": True}))


async def sources(request: Request) -> Response:
    return _secure(JSONResponse({"sources": await run_in_threadpool(offered_sources)}))


async def report_export(request: Request) -> Response:
    fmt = request.query_params.get("format", "html")
    if fmt not in FORMATS:
        return JSONResponse({"error": f"unknown format {fmt!r}; use {', '.join(FORMATS)}"}, status_code=400)
    try:
        values = await _values(request)
        data = await run_in_threadpool(export, values, fmt)  # files and fonts are read: off the event loop
    except (BadRequest, ExportError) as e:
        return JSONResponse({"error": str(e)}, status_code=400)
    return _secure(
        Response(
            data,
            media_type=FORMATS[fmt],
            headers={"Content-Disposition": f'attachment; filename="report.{EXTENSIONS.get(fmt, fmt)}"'},
        )
    )


app = Starlette(
    routes=[
        Route("/ui", lambda request: RedirectResponse("/ui/")),
        Route("/ui/", index),
        Route("/ui/api/view", report_view, methods=["POST"]),
        Route("/ui/api/export", report_export, methods=["POST"]),
        Route("/ui/api/check", check_context, methods=["POST"]),
        Route("/ui/api/sources", sources, methods=["GET"]),
        Mount("/ui/static", StaticFiles(directory=STATIC), name="static"),
        # keep last: any other path under /ui/, by any method, would reach LangGraph's own /ui files
        # (a folder this server does not have: 500)
        Route(
            "/ui/{rest:path}",
            lambda request: _secure(JSONResponse({"detail": "Not Found"}, status_code=404)),
            methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        ),
    ],
    middleware=[Middleware(Doors)],
)
