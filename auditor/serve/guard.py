"""What every request to ``auditor serve`` passes before a route sees it: the token, and
bounds on what a request may send.

**The token.** A server bound beyond loopback must be given a token (the command line
refuses to start without one); a server on loopback may be. When there is one, each
request carries it as ``Authorization: Bearer TOKEN``, or in the ``auditor_token``
cookie. A browser gets the cookie by opening any page once with ``?token=TOKEN``: the
answer sets the cookie (``HttpOnly``, ``SameSite=Strict``) and sends the browser on to
the same address without the token, so the address a person copies from the bar never
holds it. A request without the token, or with a wrong one, gets 401, whatever it asks
for, but the health check (``/healthz``), which a load balancer asks without one. Tokens
are compared in constant time.

**Bounds.** A request line's target longer than :data:`MAX_TARGET` bytes gets 414; a body
longer than :data:`MAX_BODY` bytes (as announced, or as sent) 413; a body on a method
that takes none is refused by the routes themselves (405).

Touches: nothing.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

__all__ = [
    "COOKIE",
    "HEALTH_PATH",
    "MAX_BODY",
    "MAX_TARGET",
    "Guard",
    "is_loopback",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The cookie a browser keeps the token in, once it opened a page with ``?token=``.
COOKIE = "auditor_token"
#: The one path answered without the token: a load balancer's health check.
HEALTH_PATH = "/healthz"
#: Longest request target (path and query) accepted: a trust look-up of one URL needs
#: about 2,000 bytes at most (browsers' own limit on a URL); the rest is a mistake or an
#: attack. Many URLs go in the batch form's body.
MAX_TARGET = 8_192
#: Largest request body accepted: a batch trust look-up of its most URLs
#: (:data:`auditor.serve.api.MAX_BATCH`) at about 200 bytes each, with room to spare.
MAX_BODY = 1_048_576


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` reaches this machine alone (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Guard:
    """ASGI middleware: the token rule and the request bounds (see the module's docstring)
    in front of ``app``. ``token`` None: no token asked (a loopback bind)."""

    def __init__(self, app: App, token: str | None) -> None:
        self.app = app
        self.token = token.encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        target = len(scope.get("raw_path", b"")) + len(scope.get("query_string", b""))
        if target > MAX_TARGET:
            await _refuse(send, 414, f"request target over {MAX_TARGET} bytes")
            return
        if _announced_body(scope) > MAX_BODY:
            await _refuse(send, 413, f"request body over {MAX_BODY} bytes")
            return
        if self.token is not None and scope["path"] != HEALTH_PATH:
            offered = _query_token(scope)
            if offered is not None and hmac.compare_digest(offered, self.token):
                await _set_cookie_and_return(scope, send, offered)
                return
            if not self._carried(scope):
                await _refuse(send, 401, "a token is needed: Authorization: Bearer TOKEN")
                return
        await self.app(scope, _bounded(receive), send)

    def _carried(self, scope: Scope) -> bool:
        """Whether the request carries the right token, in its header or its cookie."""
        assert self.token is not None
        for candidate in _offered_tokens(scope):
            if hmac.compare_digest(candidate, self.token):
                return True
        return False


def _offered_tokens(scope: Scope) -> list[bytes]:
    """The tokens a request offers: its bearer credentials, its cookie."""
    offered: list[bytes] = []
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            kind, _, credentials = value.partition(b" ")
            if kind.lower() == b"bearer" and credentials.strip():
                offered.append(credentials.strip())
        elif name == b"cookie":
            cookie: SimpleCookie = SimpleCookie()
            try:
                cookie.load(value.decode("latin-1"))
            except Exception:
                continue
            if COOKIE in cookie:
                offered.append(cookie[COOKIE].value.encode())
    return offered


def _query_token(scope: Scope) -> bytes | None:
    """The ``token`` of the query string, if any."""
    query: bytes = scope.get("query_string", b"")
    for name, value in parse_qsl(query.decode("latin-1")):
        if name == "token":
            return value.encode("latin-1")
    return None


def _announced_body(scope: Scope) -> int:
    """The body's length as its Content-Length says (0 when it says none)."""
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return MAX_BODY + 1  # unreadable: refused as too long
    return 0


def _bounded(receive: Receive) -> Receive:
    """``receive`` that stops a body sent without a length, or longer than it said, at
    :data:`MAX_BODY` bytes: the route reads an error rather than the rest."""
    seen = 0

    async def receiving() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > MAX_BODY:
                raise BodyTooLarge
        return message

    return receiving


class BodyTooLarge(Exception):
    """A request's body passed :data:`MAX_BODY` while it was read (the API answers 413)."""


async def _refuse(send: Send, status: int, reason: str) -> None:
    """Answer ``status`` with a JSON body saying why."""
    body = json.dumps({"error": reason, "status": status}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="auditor"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _set_cookie_and_return(scope: Scope, send: Send, token: bytes) -> None:
    """Keep the token in a cookie and send the browser on to the same address without it."""
    kept = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"))]
    query = urlencode([(k, v) for k, v in kept if k != "token"])
    root: bytes = scope.get("root_path", "").encode()
    path: bytes = scope.get("raw_path") or scope["path"].encode()
    if not path.startswith(root):  # servers differ: some give the path without the prefix
        path = root + path
    location = path.decode("latin-1") + ("?" + query if query else "")
    secure = "; Secure" if scope.get("scheme") == "https" else ""
    cookie = f"{COOKIE}={token.decode('latin-1')}; Path=/; HttpOnly; SameSite=Strict{secure}"
    headers = [
        (b"location", location.encode("latin-1", "replace")),
        (b"set-cookie", cookie.encode("latin-1")),
        (b"content-length", b"0"),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})
