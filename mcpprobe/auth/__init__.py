"""Authentication for HTTP servers: a diagnosis of 401/403, OAuth 2.1 login flows, a token store.

Modules (each loaded only when used; `mcpprobe --help` never imports any of them but `settings`):

- `challenge`: the `WWW-Authenticate` header parsed (RFC 9110 11.6.1, RFC 6750 3, RFC 9728 5.1).
- `discovery`: protected resource metadata (RFC 9728) and authorization server metadata
  (RFC 8414, OpenID Connect discovery), fetched in the order the MCP specification gives.
- `diagnosis`: what a 401/403 means, as findings and one JSON-able dict.
- `store`: tokens per server in the user's config directory, files of mode 0600.
- `login`: authorization code with PKCE over a loopback redirect, client credentials (secret or
  private_key_jwt), cross-app access (ID-JAG), refresh, revocation.
- `dpop`: DPoP proofs (RFC 9449) for tokens bound to a key.
- `apply`: the token a session sends (`--bearer-env`, or the stored token, refreshed), and the
  httpx auth that renews it when the server refuses it during a run.
- `settings`: the authentication settings of a command or a config entry (`AuthSettings`); their
  options are the command line's (mcpprobe.cli.options.auth_options).
"""
