"""JWTs from an OpenID Connect issuer, verified with PyJWT against the issuer's JWKS.

Everything is pinned by the configuration: the JWKS address, the issuer (`iss`), the audience
(`aud`) and the algorithms accepted (RS256 unless told; never `none`, never a symmetric one,
which would let anyone holding the public key sign). A token must carry `exp`, `iss`, `aud` and
`sub`; `sub` is the user. The issuer's keys are fetched once and again when a token names a key
the cache does not hold (a key rotation).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import jwt

ASYMMETRIC = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
LEEWAY_SECONDS = 30  # clock skew between the issuer and this server


class JWTConfigError(ValueError):
    """The JWT settings are missing or not valid (a one-line message naming the variable)."""


class TokenRefused(Exception):
    """A token that is not valid here; the message is the one line its caller may show."""


class IssuerUnreachable(Exception):
    """The issuer's JWKS could not be fetched (the token was neither accepted nor refused)."""


@dataclass(frozen=True)
class JWTSettings:
    jwks_url: str
    issuer: str
    audience: str
    algorithms: tuple[str, ...]
    roles_claim: str = "roles"
    admin_role: str = "deepresearch-admin"

    @classmethod
    def from_env(cls, env=os.environ) -> JWTSettings:
        missing = [
            k
            for k in ("DEEPRESEARCH_JWT_JWKS_URL", "DEEPRESEARCH_JWT_ISSUER", "DEEPRESEARCH_JWT_AUDIENCE")
            if not env.get(k)
        ]
        if missing:
            raise JWTConfigError(f"DEEPRESEARCH_AUTH=jwt needs {', '.join(missing)}")
        url = env["DEEPRESEARCH_JWT_JWKS_URL"]
        if not url.startswith(("https://", "http://127.0.0.1", "http://localhost", "http://[::1]")):
            raise JWTConfigError("DEEPRESEARCH_JWT_JWKS_URL must be an https:// address (http only on this machine)")
        algorithms = tuple(a.strip() for a in env.get("DEEPRESEARCH_JWT_ALGORITHMS", "RS256").split(",") if a.strip())
        bad = [a for a in algorithms if a not in ASYMMETRIC]
        if not algorithms or bad:
            raise JWTConfigError(
                f"DEEPRESEARCH_JWT_ALGORITHMS: use asymmetric algorithms ({', '.join(sorted(ASYMMETRIC))})"
            )
        return cls(
            url,
            env["DEEPRESEARCH_JWT_ISSUER"],
            env["DEEPRESEARCH_JWT_AUDIENCE"],
            algorithms,
            env.get("DEEPRESEARCH_JWT_ROLES_CLAIM", "roles"),
            env.get("DEEPRESEARCH_JWT_ADMIN_ROLE", "deepresearch-admin"),
        )


class JWTVerifier:
    def __init__(self, settings: JWTSettings):
        self.settings = settings
        self.keys = jwt.PyJWKClient(settings.jwks_url, cache_keys=True, lifespan=3600, timeout=10)

    def verify(self, token: str) -> tuple[str, bool]:
        """(user, is admin) of a valid token; TokenRefused otherwise (blocking: the JWKS may be fetched)."""
        s = self.settings
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenRefused("the token is not a JWT") from None
        if header.get("alg") not in s.algorithms:
            raise TokenRefused("the token's algorithm is not accepted")
        try:
            key = self.keys.get_signing_key_from_jwt(token)
        except jwt.PyJWKClientConnectionError:
            raise IssuerUnreachable() from None
        except jwt.PyJWTError:
            raise TokenRefused("the token is not signed by a key of the issuer") from None
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=list(s.algorithms),
                audience=s.audience,
                issuer=s.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise TokenRefused("the token has expired") from None
        except jwt.InvalidSignatureError:
            raise TokenRefused("the token's signature is not valid") from None
        except jwt.InvalidIssuerError:
            raise TokenRefused("the token is from another issuer") from None
        except jwt.InvalidAudienceError:
            raise TokenRefused("the token is for another audience") from None
        except jwt.PyJWTError:
            raise TokenRefused("the token is not valid") from None
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub.strip():
            raise TokenRefused("the token names no user")
        roles = claims.get(s.roles_claim) or []
        roles = [roles] if isinstance(roles, str) else roles if isinstance(roles, list) else []
        return sub, s.admin_role in roles
