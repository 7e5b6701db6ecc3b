"""One HTTP exchange with a peer, bounded: a deadline for the whole of it and a cap on its body.

httpx's timeouts are per read: a peer that sends one byte every half second never trips a 3 s
read timeout, and `response.aread()` keeps whatever arrives, however much. Every exchange whose
answer mcpprobe reads whole (the token and revocation endpoints, the requests of a login, DPoP
nonce retries, a metadata document) goes through `exchange`: the request is sent and its body
read under one deadline (an absolute `time.monotonic()`), and a body over `limit` bytes is
refused as soon as it passes the limit, never held. What fails raises an `httpx.HTTPError`
(`DeadlinePassed`, a ReadTimeout; `BodyTooLarge`), so every caller's handling of a network error
holds.

`read_capped` is the same reading for a response a caller has already opened (an MCP answer).
"""

from __future__ import annotations

import time

import anyio
import httpx2 as httpx

from mcpprobe.errors import seconds

# The body of an answer that is read whole and is not an MCP message (which --max-message-size
# bounds): a token, a client registration, a revocation's answer, an error page. 1 MiB is a
# hundred times the largest token answer seen, and what a JWT-heavy answer could need.
ANSWER_LIMIT = 1024 * 1024


class BodyTooLarge(httpx.HTTPError):
    """An answer's body passed the cap: refused, and what arrived of it dropped."""


class DeadlinePassed(httpx.ReadTimeout):
    """The exchange's deadline passed before its answer was whole."""


def deadline_in(timeout: float) -> float:
    """The absolute deadline `timeout` seconds from now."""
    return time.monotonic() + timeout


async def exchange(client: httpx.AsyncClient, request: httpx.Request, *, deadline: float,
                   limit: int = ANSWER_LIMIT) -> httpx.Response:
    """Send `request` with `client` and read its answer whole, by `deadline` and within `limit`
    bytes; the answer as a response whose body has been read. Raises DeadlinePassed (a
    ReadTimeout) when the deadline passes (sending, waiting or reading), BodyTooLarge over the
    limit, and whatever httpx raises otherwise."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlinePassed(f"{request.url}: no time left for this request", request=request)
    try:
        with anyio.fail_after(remaining):
            response = await client.send(request, stream=True)
            try:
                body = await read_capped(response, limit)
            finally:
                await response.aclose()
    except TimeoutError:
        raise DeadlinePassed(f"{request.url}: no whole answer within {seconds(remaining)} s",
                             request=request) from None
    # The body is decoded already: a Content-Encoding kept would have it decoded twice.
    headers = [(k, v) for k, v in response.headers.multi_items()
               if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
    return httpx.Response(response.status_code, headers=headers, content=body, request=request)


async def read_capped(response: httpx.Response, limit: int) -> bytes:
    """The body of an opened response, at most `limit` bytes: BodyTooLarge at once when its
    Content-Length says more, or as soon as more has arrived. (Time is the caller's to bound.)"""
    declared = response.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and len(declared) < 20 and int(declared) > limit:
        raise BodyTooLarge(f"{response.request.url}: an answer of {declared} bytes, larger than the limit of "
                           f"{limit} bytes; not read")
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > limit:
            raise BodyTooLarge(f"{response.request.url}: an answer larger than the limit of {limit} bytes; "
                               "not read further")
    return bytes(data)

