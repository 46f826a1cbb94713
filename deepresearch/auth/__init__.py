"""Who may use the LangGraph server, and whose threads they see.

`server` holds the `Auth` object langgraph.json points at (the mode is read from the
environment: none, tokens or jwt); `tokens` the file of hashed API tokens that
`deepresearch users` manages; `oidc` the verification of JWTs against an issuer's JWKS;
`doors` the middleware that refuses another user's streams, commands and websockets before
they start, and keeps query-string credentials out of the server's log.
"""
