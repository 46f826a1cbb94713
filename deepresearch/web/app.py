"""The web page, mounted on the LangGraph server by langgraph.json's `http.app`.

    /ui/                              the page (static HTML, CSS and JavaScript of this package)
    /ui/api/threads/{id}/view         a run's report as safe HTML + its citations (JSON)
    /ui/api/threads/{id}/export?format=md|html|docx|pdf   the report as a file

The page itself talks to the server's own API (threads, runs, streaming, interrupts); these
routes only render. They read a thread through the server's in-process API (the LangGraph
SDK's client without a URL), so they see what the API sees, auth included.
"""

from __future__ import annotations

import re
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from deepresearch.events import redact
from deepresearch.web.export import FORMATS, ExportError, export
from deepresearch.web.render import view

STATIC = Path(__file__).resolve().parent / "static"
THREAD_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
# the page's policy: its own scripts and styles only; a tag that slipped into the report runs nothing
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")


def _secure(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


async def _values(request: Request) -> dict:
    from langgraph_sdk import get_client

    tid = request.path_params["thread_id"]
    if not THREAD_ID.fullmatch(tid):
        raise ExportError("not a thread id")
    headers = {k: v for k, v in request.headers.items() if k.lower() in ("authorization", "x-api-key")}
    try:
        client = get_client(headers=headers or None)  # in-process: the server's own API
    except Exception:  # noqa: BLE001 - not inside a LangGraph server: call it over HTTP
        client = get_client(url=str(request.base_url).rstrip("/"), headers=headers or None)
    state = await client.threads.get_state(tid)
    return state.get("values") or {}


async def index(request: Request) -> Response:
    return _secure(FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8"))


async def report_view(request: Request) -> Response:
    try:
        values = await _values(request)
    except ExportError as e:
        return JSONResponse({"error": str(e)}, status_code=400)
    except Exception as e:  # noqa: BLE001 - one line, no trace
        return JSONResponse({"error": redact(f"cannot read the thread: {type(e).__name__}")}, status_code=404)
    out = await run_in_threadpool(view, values)
    out.update(rewrite_history=values.get("rewrite_history") or [], usage=values.get("usage") or {},
               stopped_by=values.get("stopped_by"), question=values.get("question") or "")
    return _secure(JSONResponse(out))


async def report_export(request: Request) -> Response:
    fmt = request.query_params.get("format", "html")
    if fmt not in FORMATS:
        return JSONResponse({"error": f"unknown format {fmt!r}; use {', '.join(FORMATS)}"}, status_code=400)
    try:
        values = await _values(request)
    except ExportError as e:
        return JSONResponse({"error": str(e)}, status_code=400)
    except Exception as e:  # noqa: BLE001
        return JSONResponse({"error": redact(f"cannot read the thread: {type(e).__name__}")}, status_code=404)
    try:  # files and fonts are read: off the event loop
        data = await run_in_threadpool(export, values, fmt)
    except ExportError as e:
        return JSONResponse({"error": str(e)}, status_code=409)
    except Exception as e:  # noqa: BLE001
        return JSONResponse({"error": redact(f"cannot export: {type(e).__name__}")}, status_code=500)
    name = f"report-{request.path_params['thread_id'][:8]}.{fmt}"
    return _secure(Response(data, media_type=FORMATS[fmt],
                            headers={"Content-Disposition": f'attachment; filename="{name}"'}))


app = Starlette(routes=[
    Route("/ui", lambda request: RedirectResponse("/ui/")),
    Route("/ui/", index),
    Route("/ui/api/threads/{thread_id}/view", report_view),
    Route("/ui/api/threads/{thread_id}/export", report_export),
    Mount("/ui/static", StaticFiles(directory=STATIC), name="static"),
])
