"""The API tokens file: one token per user, stored hashed.

    {"users": {"alice": {"sha256": "<hex>", "admin": false, "created": "2026-01-01T00:00:00Z"}}}

A token is 32 random bytes (`secrets`), shown once when it is made; only its SHA-256 is kept
(a token is random, not a password: a slow salted hash adds nothing against guessing it). A
presented token is hashed and compared with every user's hash in constant time
(`hmac.compare_digest`), so the time taken says nothing about which user came close. The
file is written whole to a temporary file and renamed over the old one, readable by its
owner only; the server reads it again when it changes, so `deepresearch users add|remove`
takes effect without a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import platformdirs

TOKEN_PREFIX = "drt_"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_@+-]{0,63}$")  # no '.': a user's name is a store label


class TokensFileError(ValueError):
    """The tokens file cannot be read or written, or a name is not valid (a one-line message)."""


def default_path() -> Path:
    """DEEPRESEARCH_TOKENS_FILE, else tokens.json in the user's configuration folder."""
    given = os.environ.get("DEEPRESEARCH_TOKENS_FILE")
    return Path(given).expanduser() if given else Path(platformdirs.user_config_dir("deepresearch")) / "tokens.json"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def load(path: Path) -> dict[str, dict]:
    """The users of the file at `path` (none when it does not exist)."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise TokensFileError(f"the tokens file {path} cannot be read ({type(e).__name__})") from None
    users = data.get("users") if isinstance(data, dict) else None
    if not isinstance(users, dict) or not all(
        isinstance(u, dict) and isinstance(u.get("sha256"), str) for u in users.values()
    ):
        raise TokensFileError(f"the tokens file {path} is not a deepresearch tokens file")
    return users


def _save(path: Path, users: dict[str, dict]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:  # mkstemp makes it 0600
            json.dump({"users": users}, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError as e:
        raise TokensFileError(f"the tokens file {path} cannot be written ({e.strerror or type(e).__name__})") from None


def add(path: Path, name: str, *, admin: bool = False) -> str:
    """Make a token for a new user `name`; the token itself (only its hash is kept)."""
    if not NAME.match(name or ""):
        raise TokensFileError("a user name is 1 to 64 letters, digits, _ @ + or - (no dots or spaces)")
    users = load(path)
    if name in users:
        raise TokensFileError(f"user {name!r} exists already: remove it first to give it a new token")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    users[name] = {
        "sha256": digest(token),
        "admin": bool(admin),
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    _save(path, users)
    return token


def remove(path: Path, name: str) -> None:
    users = load(path)
    if name not in users:
        raise TokensFileError(f"no user {name!r} in {path}")
    del users[name]
    _save(path, users)


def find(users: dict[str, dict], token: str) -> tuple[str, dict] | None:
    """The (name, record) of the user whose token this is, or None. Every hash is compared."""
    presented = digest(token)
    found = None
    for name, record in users.items():
        if hmac.compare_digest(presented, record["sha256"]):
            found = (name, record)
    return found


class TokensFile:
    """The users of a tokens file, read again whenever the file changes."""

    def __init__(self, path: Path):
        self.path = path
        self._stamp: tuple | None = None
        self._users: dict[str, dict] = {}

    def users(self) -> dict[str, dict]:
        try:
            st = self.path.stat()
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        if stamp != self._stamp:
            self._users = load(self.path) if stamp else {}
            self._stamp = stamp
        return self._users

    def verify(self, token: str) -> tuple[str, bool] | None:
        """(user name, is admin) for a valid token, else None."""
        found = find(self.users(), token)
        return (found[0], bool(found[1].get("admin"))) if found else None
