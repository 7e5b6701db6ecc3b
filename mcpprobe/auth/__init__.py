"""Authentication for HTTP servers: a diagnosis of 401/403, OAuth 2.1 login flows, a token store.

Modules (each loaded only when used; `mcpprobe --help` never imports any of them but `settings`),
each importing only those listed before it:

- `discovery`: protected resource metadata (RFC 9728) and authorization server metadata
  (RFC 8414, OpenID Connect discovery), fetched in the order the MCP specification gives.
  (The `WWW-Authenticate` header is parsed below, in mcpprobe.wire.challenge.)
- `diagnosis`: what a 401/403 means, as findings and one JSON-able dict.
- `store`: tokens per server and authorization server (issuer) in the user's config directory, files
  of mode 0600.
- `settings`: the authentication settings of a command or a config entry, resolved from the
  environment (never a secret on the command line).
- `dpop`: DPoP proofs (RFC 9449) for tokens bound to a key: in a login's token requests, and on
  every request with a bound token.
- `tokens`: the token endpoint without the SDK: refresh, client credentials again, client
  assertions (RFC 7523), revocation (RFC 7009); `LoginFailed`.
- `callback`: the browser's side of the code flow, and its loopback redirect receiver (RFC 8252).
- `contact`: a session opened as every command opens one, and the first request the server refused.
- `workload`: the JWT bearer grant with a workload's own JWT (workload identity federation), and
  `ServerMoved`, a fresh token refused by a server that now names another authorization server.
- `login`: authorization code with PKCE, client credentials (secret or private_key_jwt), cross-app
  access (ID-JAG), on the SDK's client auth; the JWT bearer grant; after a server moves, registering
  and logging in with its new authorization server.
- `again`: a login inside another command: a step-up for more scope, or with the authorization
  server a server has moved to.
- `apply`: the token a session sends (`--bearer-env`, or the stored token, refreshed), and the
  httpx auth that renews it when the server refuses it during a run.
"""
