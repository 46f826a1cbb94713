"""The MCP servers' config (tools.mcp runs them), in the common form (a JSON file, or the same dict):

    {"mcpServers": {"notes": {"command": "python", "args": ["server.py"], "env": {"KEY": "${KEY}"}},
                    "web":   {"url": "https://mcp.example/mcp", "transport": "streamable_http",
                              "headers": {"Authorization": "Bearer ${TOKEN}"}}}}

`${VAR}` in `env` and `headers` values is read from the environment. Those values are secrets:
registered to be masked wherever the run's text is redacted, masked in a server's causes (`mask`),
and masked in the settings a run stores (`public_config`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from deepresearch.events import redact, register_secrets
from deepresearch.files import FileReadError, read_text

HTTP_TRANSPORTS = ("streamable_http", "streamable-http", "http", "sse", "websocket")
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_VAR = re.compile(r"\$\{([^}]+)\}")
MASK = "***"
MAX_CONFIG_BYTES = 1_000_000


class MCPConfigError(ValueError):
    """The MCP config cannot be used (bad input: exit 2 on the CLI)."""


def _expand(value: str) -> str:
    return _VAR.sub(lambda m: os.environ.get(m.group(1), ""), value)


def _str_map(entry: dict, key: str, server: str) -> dict[str, str] | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise MCPConfigError(f"MCP server {server!r}: {key} must map names to strings")
    # a value masked in stored settings (see public_config) is read again from the environment
    return {k: (os.environ.get(k, "") if v == MASK else _expand(v)) for k, v in value.items()}


def load_config(value: str | Path | dict) -> dict[str, dict]:
    """{server name: connection} in langchain-mcp-adapters' format; MCPConfigError when unusable."""
    if isinstance(value, (str, Path)):
        path = Path(value).expanduser()
        if not path.exists():
            raise MCPConfigError(f"MCP config not found: {path}")
        try:  # a regular file of at most 1 MB (a FIFO or a device is refused, never waited on)
            data = json.loads(read_text(path, MAX_CONFIG_BYTES))
        except (FileReadError, UnicodeDecodeError) as e:
            raise MCPConfigError(f"cannot read the MCP config {path}: {getattr(e, 'reason', None) or e}") from None
        except json.JSONDecodeError as e:
            raise MCPConfigError(f"the MCP config {path} is not valid JSON: {e.msg} at line {e.lineno}") from None
        except (ValueError, RecursionError) as e:  # a number past the int digits limit, nesting past the stack
            raise MCPConfigError(
                f"the MCP config {path} is not usable JSON: "
                + ("nested too deeply" if isinstance(e, RecursionError) else "a number with too many digits")
            ) from None
    else:
        data = value
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise MCPConfigError('the MCP config needs servers: {"mcpServers": {"name": {"command": ...} or {"url": ...}}}')
    out: dict[str, dict] = {}
    for name, entry in servers.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise MCPConfigError(f"MCP server name {name!r}: use letters, digits, '_', '-' or '.'")
        if not isinstance(entry, dict):
            raise MCPConfigError(f"MCP server {name!r}: its entry must be an object")
        if entry.get("disabled") is True:
            continue
        if entry.get("command"):
            args = entry.get("args", [])
            if (
                not isinstance(entry["command"], str)
                or not isinstance(args, list)
                or not all(isinstance(a, str) for a in args)
            ):
                raise MCPConfigError(f"MCP server {name!r}: command must be a string and args a list of strings")
            conn: dict[str, Any] = {
                "transport": "stdio",
                "command": entry["command"],
                "args": list(args),
                "env": _str_map(entry, "env", name),
            }
            if entry.get("cwd"):
                conn["cwd"] = str(entry["cwd"])
        elif entry.get("url"):
            url = entry["url"]
            if not isinstance(url, str) or not url.startswith(("http://", "https://", "ws://", "wss://")):
                raise MCPConfigError(f"MCP server {name!r}: url must be an http(s) or ws(s) URL")
            default = (
                "websocket"
                if url.startswith("ws")
                else "sse"
                if url.rstrip("/").endswith("/sse")
                else "streamable_http"
            )
            transport = entry.get("transport") or entry.get("type") or default
            if transport not in HTTP_TRANSPORTS:
                raise MCPConfigError(f"MCP server {name!r}: transport must be one of {', '.join(HTTP_TRANSPORTS)}")
            conn = {"transport": transport, "url": url}
            headers = _str_map(entry, "headers", name)
            if headers and transport != "websocket":
                conn["headers"] = headers
        else:
            raise MCPConfigError(f"MCP server {name!r}: needs a command (stdio) or a url")
        out[name] = conn
        register_secrets(_secrets(conn))  # masked in what the servers return, as in errors
    if not out:
        raise MCPConfigError("the MCP config has no enabled server")
    return out


def public_config(value):
    """`value` fit to store with the run's settings: a path as is; a dict with the values of
    `env` and `headers` masked (a `${VAR}` reference is kept: it holds no secret)."""
    if not isinstance(value, dict):
        return value
    servers = value.get("mcpServers", value.get("servers"))
    if not isinstance(servers, dict):
        return {}
    safe = {}
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            continue
        entry = dict(entry)
        for key in ("env", "headers"):
            if isinstance(entry.get(key), dict):
                entry[key] = {k: v if isinstance(v, str) and _VAR.fullmatch(v) else MASK for k, v in entry[key].items()}
        safe[name] = entry
    return {"mcpServers": safe}


def _secrets(conn: dict) -> list[str]:
    values = list((conn.get("env") or {}).values()) + list((conn.get("headers") or {}).values())
    values += [v.split(" ", 1)[1] for v in (conn.get("headers") or {}).values() if " " in v]  # "Bearer <token>"
    return sorted((v for v in values if len(v) >= 4), key=len, reverse=True)


def mask(text: str, conn: dict) -> str:
    """`text` without the server's env and header values (and any key-shaped string)."""
    for secret in _secrets(conn):
        text = text.replace(secret, MASK)
    return redact(text)
