"""The credential a deep run's section runs carry (`section_execution: server`): the parent
run's user, signed with the deployment's own key `DEEPRESEARCH_SECTION_KEY` (the same on every
worker; at least 32 characters), so a section run on any worker is the owner's and nobody
else's.

The parent's worker has no token of the user's (a run carries none: tokens never reach runs,
checkpoints or the store). It makes a short-lived JWT (HS256, PyJWT) naming the user, this
audience and an expiry a little past the section's time budget, and sends it as the bearer
token of the section's requests only; the server's sign-in (deepresearch.auth.server) takes
it as that user. It carries no admin right: a section run needs its owner's threads alone.
"""

from __future__ import annotations

import os
import time

import jwt

KEY_ENV = "DEEPRESEARCH_SECTION_KEY"
AUDIENCE = "deepresearch-section-run"
ISSUER = "deepresearch"
MIN_KEY = 32


class SectionKeyError(ValueError):
    """The deployment has no usable section key (one line)."""


def _key() -> str | None:
    key = os.environ.get(KEY_ENV) or ""
    return key if len(key) >= MIN_KEY else None


def section_token(user: str, seconds: float, thread: str) -> str:
    """A bearer token naming `user` for `seconds`, for the section run on `thread` (the one
    thread it may create with that id: deepresearch.auth.doors)."""
    key = _key()
    if key is None:
        raise SectionKeyError(
            f"sections as runs on a server with sign-in need {KEY_ENV} (at least {MIN_KEY} characters, "
            "the same on every worker)"
        )
    now = int(time.time())
    claims = {"sub": user, "aud": AUDIENCE, "iss": ISSUER, "iat": now, "exp": now + int(seconds) + 1, "thread": thread}
    return jwt.encode(claims, key, algorithm="HS256")


def section_claims(token: str) -> dict | None:
    """A valid section token's claims, or None when it is not one."""
    key = _key()
    if key is None:
        return None
    try:
        claims = jwt.decode(
            token,
            key,
            algorithms=["HS256"],
            audience=AUDIENCE,
            issuer=ISSUER,
            options={"require": ["exp", "sub", "aud", "iss"]},
        )
    except jwt.InvalidTokenError:
        return None
    return claims if isinstance(claims.get("sub"), str) and claims["sub"] else None


def section_user(token: str) -> str | None:
    """The user a section token names, or None when it is not one (or not valid)."""
    claims = section_claims(token)
    return claims["sub"] if claims else None


def section_thread_of(authorization: str | None) -> str | None:
    """The thread a section token (an `Authorization` header's) was made for, or None."""
    scheme, _, token = (authorization or "").partition(" ")
    claims = section_claims(token.strip()) if scheme.lower() == "bearer" else None
    thread = claims.get("thread") if claims else None
    return thread if isinstance(thread, str) else None
