"""DPoP (RFC 9449): tokens bound to a key the client holds, proved on every request.

A `DPoPKey` is an EC P-256 key made for one login and stored with its token (the token is useless
without it, and the key without the token). Each request carries a fresh proof: a JWT of type
`dpop+jwt` whose header holds the public key, signed over the request's method and URL (`htm`,
`htu`), with a `jti`, `iat`, the server's `nonce` once it has given one, and, towards the resource
server, `ath`: the hash of the access token. A server that wants a nonce answers
`use_dpop_nonce` with a `DPoP-Nonce` header; the request is then proved again with it, once.

Proofs go to two places: the token requests of a login (`LoginProofs`, `send_proved`), and every
request to the MCP server with a bound token (`BoundToken`; `BoundAuth` when nothing renews it).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2

NONCE_ERROR = "use_dpop_nonce"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def htu(url: str) -> str:
    """The proof's `htu`: the request URL without query and fragment (RFC 9449 4.2)."""
    parts = urlsplit(str(url))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def thumbprint(jwk: dict[str, Any]) -> str:
    """The RFC 7638 thumbprint of a public JWK (EC or RSA): what a token is bound to (`cnf.jkt`)."""
    members = ("crv", "kty", "x", "y") if jwk.get("kty") == "EC" else ("e", "kty", "n")
    canonical = json.dumps({k: jwk[k] for k in members}, separators=(",", ":"), sort_keys=True)
    return _b64(hashlib.sha256(canonical.encode()).digest())


class DPoPKey:
    def __init__(self, pem: str | None = None) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

        key: PrivateKeyTypes
        if pem is None:
            key = ec.generate_private_key(ec.SECP256R1())
            pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()).decode()
        else:
            key = serialization.load_pem_private_key(pem.encode(), password=None)
            if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
                raise ValueError("a DPoP key must be EC P-256")
        self.pem = pem
        numbers = key.public_key().public_numbers()
        self.jwk = {"kty": "EC", "crv": "P-256", "x": _b64(numbers.x.to_bytes(32, "big")),
                    "y": _b64(numbers.y.to_bytes(32, "big"))}

    @property
    def jkt(self) -> str:
        return thumbprint(self.jwk)

    def proof(self, method: str, url: str, *, nonce: str | None = None, access_token: str | None = None) -> str:
        import jwt

        claims: dict[str, Any] = {"jti": str(uuid.uuid4()), "htm": method.upper(), "htu": htu(url),
                                  "iat": int(time.time())}
        if nonce:
            claims["nonce"] = nonce
        if access_token:
            claims["ath"] = _b64(hashlib.sha256(access_token.encode()).digest())
        return jwt.encode(claims, self.pem, algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": self.jwk})


def wants_nonce(response: Any) -> str | None:
    """The nonce a server asks for: a 400 (authorization server) or 401 (resource server) saying
    `use_dpop_nonce`, with a `DPoP-Nonce` header. None otherwise."""
    nonce = response.headers.get("dpop-nonce")
    if not nonce or response.status_code not in (400, 401):
        return None
    if response.status_code == 401:
        from mcpprobe.wire.challenge import parse_www_authenticate

        challenges = parse_www_authenticate(response.headers.get("www-authenticate", ""))
        return nonce if any(c.get("error") == NONCE_ERROR for c in challenges) else None
    try:
        body = json.loads(response.content or b"{}")
    except (ValueError, AttributeError):
        return None
    return nonce if isinstance(body, dict) and body.get("error") == NONCE_ERROR else None


# ----- the token requests of a login -----


@dataclass
class LoginProofs:
    """DPoP for one login: the key, the nonces servers gave (by origin), whether tokens came bound."""

    key: DPoPKey
    nonces: dict[str, str] = field(default_factory=dict)
    bound: bool = False


async def send_proved(client: Any, request: Any, proofs: LoginProofs, *, deadline: float) -> Any:
    """Send a token request of the SDK's flow proved with DPoP (a nonce the server demands is used for
    one more try), both tries within `deadline` and each answer within the cap (wire/exchange.py).
    The SDK knows only Bearer tokens, so a DPoP token answer is handed to it as Bearer, and
    remembered as bound in `proofs`."""
    from mcpprobe.wire.exchange import exchange

    origin = f"{request.url.scheme}://{request.url.netloc.decode()}"
    for attempt in range(2):
        request.headers["DPoP"] = proofs.key.proof(request.method, str(request.url), nonce=proofs.nonces.get(origin))
        response = await exchange(client, request, deadline=deadline)
        if response.headers.get("dpop-nonce"):
            nonce = wants_nonce(response)
            proofs.nonces[origin] = response.headers["dpop-nonce"]
            if nonce and attempt == 0:
                continue
        break
    if response.status_code != 200:
        return response
    try:
        data = json.loads(response.content)
    except ValueError:
        return response
    if isinstance(data, dict) and str(data.get("token_type", "")).lower() == "dpop":
        proofs.bound = True
        data["token_type"] = "Bearer"
        return httpx2.Response(200, json=data, request=request)
    return response


# ----- the requests to the MCP server with a bound token -----


class BoundToken:
    """The proofs of requests that carry an access token: `Authorization: DPoP <token>` with a fresh
    proof of the key when the token is bound (a PEM key), `Bearer <token>` otherwise; and the nonce
    the server last gave, which every later proof carries."""

    def __init__(self) -> None:
        self.nonce: str | None = None
        self._key: DPoPKey | None = None

    def attach(self, request: Any, token: str, pem: str | None) -> None:
        if not pem:
            request.headers["Authorization"] = f"Bearer {token}"
            return
        if self._key is None or self._key.pem != pem:
            self._key = DPoPKey(pem)
        request.headers["Authorization"] = f"DPoP {token}"
        request.headers["DPoP"] = self._key.proof(request.method, str(request.url), nonce=self.nonce,
                                                  access_token=token)

    def take_nonce(self, response: Any) -> bool:
        """Keep the nonce an answer gives; True when it was a 401 `use_dpop_nonce`: prove again, once."""
        if not response.headers.get("dpop-nonce"):
            return False
        asked = wants_nonce(response) if response.status_code == 401 else None
        self.nonce = response.headers["dpop-nonce"]
        return bool(asked)


class BoundAuth(httpx2.Auth):
    """An httpx2 auth flow for one DPoP-bound token that nothing renews: the token and a fresh proof
    on every request, proved again once for a 401 `use_dpop_nonce`. What a login checks the token it
    has just obtained with (mcpprobe.auth.apply.RenewingBearer is the one that renews)."""

    def __init__(self, token: str, pem: str) -> None:
        self.token = token
        self.pem = pem
        self.proofs = BoundToken()

    async def async_auth_flow(self, request: Any) -> Any:
        self.proofs.attach(request, self.token, self.pem)
        response = yield request
        if self.proofs.take_nonce(response):
            self.proofs.attach(request, self.token, self.pem)
            yield request
