"""The authorization family: the 401 challenge and the metadata documents of a protected server.

Authorization is OPTIONAL in MCP, so these checks judge only a server that asked for it: one
whose answer to the connection was HTTP 401. Then the connection stops (exit 7, as for every
command), mcpprobe's own diagnosis runs (mcpprobe.auth.diagnosis: the challenge parsed, the
protected resource metadata and the authorization server metadata fetched without any of the
user's credentials), and `verdicts_from_diagnosis` turns what it found into these checks' results;
nothing more is sent. A server that let the connection in is not judged: `n/a` when no credentials
were given (it asked for none), `skipped` when they were (its challenge was never seen).

The revision a 401 is judged by: none was negotiated, so it is the one mcpprobe asked for
(`--protocol VERSION`, `modern`: 2026-07-28), else the newest handshake revision, 2025-11-25.
"""

from __future__ import annotations

from typing import Any

from mcpprobe.auth.discovery import challenge_url_problem
from mcpprobe.check.catalogue import Status
from mcpprobe.check.context import CheckContext, Verdict, failed, inert, passed
from mcpprobe.wire.protocols import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE, LATEST_MODERN, MODERN_VERSIONS

HEADER_ONLY = ("2025-06-18",)  # the revision whose 401 must name resource_metadata (later: or a well-known URI)
# The level of the whole authorization page, in every revision that has it: "Authorization is
# **OPTIONAL** for MCP implementations. When supported: Implementations using an HTTP-based transport
# **SHOULD** conform to this specification." Its MUSTs bind a server that does the specification's
# OAuth; one protected another way (a static bearer token) meets only that SHOULD.
SHOULD_CONFORM = ("\"Implementations using an HTTP-based transport SHOULD conform to this specification\" "
                  "(authorization is OPTIONAL)")


def judged_version(protocol: str) -> str:
    """The revision a 401 is judged by, from --protocol (docs/checks/auth.md)."""
    if protocol in (*HANDSHAKE_VERSIONS, *MODERN_VERSIONS):
        return protocol
    return LATEST_MODERN if protocol == "modern" else LATEST_HANDSHAKE


def _credentials(ctx: CheckContext) -> bool:
    target: Any = ctx.session.target
    names = {name.lower() for name in dict(getattr(target, "headers", {}) or {})}
    return "authorization" in names or getattr(target, "auth", None) is not None


async def connected(ctx: CheckContext) -> Verdict:
    """The connection was let in: there is no 401 to judge."""
    if _credentials(ctx):
        return Verdict(Status.SKIPPED, "credentials were sent and accepted, so the server's 401 challenge was "
                                       "never seen; nothing sent")
    return Verdict(Status.NA, "the server asked for no authorization (no HTTP 401), which MCP allows: "
                              "authorization is OPTIONAL")


def _evidence(attempts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"sent": inert(f"GET {a.get('url')} ({a.get('source')})"),
             "received": inert(f"HTTP {a.get('status')}: {a.get('result')}" + (f", {a['note']}" if a.get("note")
                                                                              else "")),
             "ms": float(a.get("ms") or 0.0)} for a in attempts[:12]]


def uses_oauth(data: dict[str, Any]) -> bool:
    """Whether the 401 shows any sign of the specification's authorization: a `resource_metadata` in
    its Bearer challenge, or a protected resource metadata document served (even a malformed one)."""
    bearer = (data.get("wwwAuthenticate") or {}).get("bearer") or {}
    prm = data.get("protectedResourceMetadata") or {}
    return (isinstance(bearer.get("resource_metadata"), str) or prm.get("document") is not None
            or any(a.get("result") in ("ok", "malformed") for a in prm.get("attempts") or []))


def _not_oauth(what: str, evidence: list[dict[str, Any]]) -> Verdict:
    """A server protected without the specification's OAuth: at most the SHOULD of the whole page."""
    return Verdict(Status.WARN, f"{what}: the server asks for credentials without the specification's "
                                f"authorization (a static bearer token, say); {SHOULD_CONFORM}, so this is a "
                                "warning, not a failure", evidence)


def challenge(data: dict[str, Any], version: str) -> Verdict:
    raw = (data.get("wwwAuthenticate") or {}).get("raw")
    bearer = (data.get("wwwAuthenticate") or {}).get("bearer") or {}
    prm = data.get("protectedResourceMetadata") or {}
    evidence = [{"sent": "the connection's first request", "received": inert(f"HTTP 401; WWW-Authenticate: {raw}"
                                                                               if raw else "HTTP 401; no "
                                                                               "WWW-Authenticate"), "ms": 0.0}]
    found_at = prm.get("url") if prm.get("document") is not None else None
    named = bearer.get("resource_metadata")
    if isinstance(named, str):
        problem = challenge_url_problem(named)
        if problem is None:
            return Verdict(Status.PASS, f"the 401 names its protected resource metadata: resource_metadata="
                                        f"{inert(named, 120)}", evidence)
        return _not_a_url(named, problem, found_at, version, evidence + _evidence(prm.get("attempts") or []))
    if found_at and version not in HEADER_ONLY:
        return Verdict(Status.PASS, f"the 401 has no resource_metadata, but the metadata is at the well-known URI "
                                    f"{inert(found_at, 120)}, which protocol {version} allows instead", evidence)
    what = "no WWW-Authenticate header" if not raw else "a WWW-Authenticate header without resource_metadata"
    where = " and no metadata at a well-known URI either" if version not in HEADER_ONLY else ""
    evidence += _evidence(prm.get("attempts") or [])
    if not uses_oauth(data):
        return _not_oauth(f"the 401 carries {what}, and no protected resource metadata is served", evidence)
    return Verdict(Status.FAIL, f"the 401 carries {what}{where}", evidence)


def _not_a_url(named: str, problem: str, found_at: str | None, version: str,
               evidence: list[dict[str, Any]]) -> Verdict:
    """A `resource_metadata` that is no URL (mcpprobe.auth.discovery.challenge_url_problem: empty, a
    relative reference, another scheme, one that does not parse). RFC 9728 section 5.1 defines it as
    "The URL of the protected resource metadata", and MCP clients "MUST ... use the resource metadata
    URL from the parsed WWW-Authenticate headers when present" (2025-11-25 on), so a client that
    follows the specification cannot get past it. 2025-06-18: the header is the only way, and it
    "MUST" indicate "the location of the resource server metadata URL": fail. 2025-11-25 on: "MUST
    implement one of the following discovery mechanisms": the well-known URI meets it when the
    metadata is served there (a warning: the MUST is kept, the header misleads); else neither is (fail)."""
    said = f"the 401's resource_metadata {inert(named, 120)} is not a URL ({problem}); RFC 9728 (section 5.1) " \
           "defines it as \"The URL of the protected resource metadata\""
    if version in HEADER_ONLY:
        return Verdict(Status.FAIL, f"{said}, and protocol {version} makes that header the way to \"indicate the "
                                    "location of the resource server metadata URL\" (MUST)", evidence)
    if found_at:
        return Verdict(Status.WARN, f"{said}; the metadata is served at the well-known URI {inert(found_at, 120)}, "
                                    f"which meets the MUST of protocol {version} (one of two discovery mechanisms), "
                                    "but clients \"MUST ... use the resource metadata URL from the parsed "
                                    "WWW-Authenticate headers when present\", so the header misleads them",
                       evidence)
    return Verdict(Status.FAIL, f"{said}, and no metadata is served at a well-known URI either: neither discovery "
                                f"mechanism of protocol {version} is implemented (MUST)", evidence)


def resource_metadata(data: dict[str, Any], version: str) -> Verdict:
    prm = data.get("protectedResourceMetadata") or {}
    attempts = prm.get("attempts") or []
    document = prm.get("document")
    if isinstance(document, dict):
        servers = document.get("authorization_servers") or []
        verdict = passed(f"protected resource metadata at {inert(prm.get('url'), 120)} names authorization "
                         f"server(s) {inert(servers, 160)}")
    else:
        bad = [a for a in attempts if a.get("result") == "malformed"]
        if bad:
            verdict = failed(f"the protected resource metadata at {inert(bad[0].get('url'), 120)} is unusable: "
                             f"{inert(bad[0].get('note'), 200)}")
        else:
            tried = ", ".join(f"{a.get('url')} ({a.get('status') or a.get('result')})" for a in attempts)
            what = f"no protected resource metadata (RFC 9728) was found: tried {inert(tried, 300)}"
            verdict = failed(what) if uses_oauth(data) else _not_oauth(what, [])
    verdict.evidence = _evidence(attempts)
    return verdict


def server_metadata(data: dict[str, Any], version: str) -> Verdict:
    server = data.get("authorizationServer") or {}
    attempts = server.get("attempts") or []
    if (data.get("protectedResourceMetadata") or {}).get("document") is None:
        return Verdict(Status.SKIPPED, "no protected resource metadata named an authorization server (see "
                                       "auth.resource-metadata); not judged", _evidence(attempts))
    if server.get("supports"):
        verdict = passed(f"authorization server metadata of {inert(server.get('issuer'), 120)} at "
                         f"{inert(server.get('url'), 120)} is valid")
    else:
        bad = [a for a in attempts if a.get("result") == "malformed"]
        why = (f"unusable at {inert(bad[0].get('url'), 120)}: {inert(bad[0].get('note'), 200)}" if bad else
               "not found: tried " + inert(", ".join(f"{a.get('url')} ({a.get('status') or a.get('result')})"
                                                     for a in attempts), 300))
        verdict = failed(f"the authorization server metadata (RFC 8414 or OpenID Connect discovery) of issuer "
                         f"{inert(server.get('issuer'), 120)} is {why}")
        if data.get("timedOut"):
            verdict = Verdict(Status.ERROR, verdict.message + " (the time limit ran out)")
    verdict.evidence = _evidence(attempts)
    return verdict


FROM_DIAGNOSIS = {
    "auth.challenge": challenge,
    "auth.resource-metadata": resource_metadata,
    "auth.server-metadata": server_metadata,
}

IMPLEMENTS = dict.fromkeys(FROM_DIAGNOSIS, connected)
