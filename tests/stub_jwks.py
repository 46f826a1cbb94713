"""An OIDC issuer's JWKS on 127.0.0.1, and the JWTs it (or an impostor) signs, for tests.

    with StubIssuer() as issuer:
        token = issuer.token("alice")                       # valid for an hour
        issuer.token("alice", expires_in=-120)              # expired
        issuer.token("alice", key=issuer.impostor)          # signed by a key the JWKS does not hold
        issuer.token("alice", iss="https://elsewhere.example")

The JWKS (GET /jwks.json) publishes the issuer's RSA public key under its `kid`; the stub
counts the fetches. The impostor key signs with the issuer's `kid`, as a forger would.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

ISSUER = "https://issuer.test.example"
AUDIENCE = "deepresearch-test"


class StubIssuer:
    def __init__(self):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.impostor = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "test-key-1"
        self.fetches = 0

    def jwks(self) -> dict:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**jwk, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def token(
        self,
        sub: str,
        *,
        key=None,
        iss: str = ISSUER,
        aud: str = AUDIENCE,
        expires_in: int = 3600,
        roles: list[str] | None = None,
        alg: str = "RS256",
    ) -> str:
        now = int(time.time())
        claims = {"sub": sub, "iss": iss, "aud": aud, "iat": now, "exp": now + expires_in}
        if roles:
            claims["roles"] = roles
        return jwt.encode(claims, key or self.key, algorithm=alg, headers={"kid": self.kid})

    def env(self) -> dict:
        return {
            "DEEPRESEARCH_AUTH": "jwt",
            "DEEPRESEARCH_JWT_JWKS_URL": self.jwks_url,
            "DEEPRESEARCH_JWT_ISSUER": ISSUER,
            "DEEPRESEARCH_JWT_AUDIENCE": AUDIENCE,
        }

    def __enter__(self) -> StubIssuer:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path != "/jwks.json":
                    self.send_error(404)
                    return
                stub.fetches += 1
                body = json.dumps(stub.jwks()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.jwks_url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
