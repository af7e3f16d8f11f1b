"""Why a request got no response, in plain words: a refused connection, a name not
resolved, a failed TLS handshake (and whether the server spoke no TLS at all), a reset.

requests and urllib3 wrap the cause two or three deep (``ConnectionError`` around
``MaxRetryError`` around ``NewConnectionError`` around ``ConnectionRefusedError``);
:func:`cause_of` looks through the wrapping for it.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = [
    "CONNECTION_FAILED",
    "NAME_NOT_RESOLVED",
    "NO_TLS",
    "REFUSED",
    "cause_of",
    "speaks_no_tls",
]

#: What a failed connection's detail starts with (the walker's problem detail).
CONNECTION_FAILED = "connection failed: "
REFUSED = "connection refused"
NAME_NOT_RESOLVED = "name not resolved"
#: The handshake's answer was not TLS: a plain-HTTP server on that port.
NO_TLS = "TLS handshake failed: no TLS there (the server answers plain HTTP?)"

# OpenSSL's reasons when the first bytes back are not a TLS record: what a plain HTTP
# server's "400 Bad Request" looks like to a client expecting a ServerHello.
_NOT_TLS_REASONS = (
    "WRONG_VERSION_NUMBER",
    "HTTP_REQUEST",
    "RECORD_LAYER_FAILURE",
    "PACKET_LENGTH_TOO_LONG",
    "UNKNOWN_PROTOCOL",
)
# How deep the wrapping is looked through: requests' is three or four levels.
_MAX_DEPTH = 8
# A detail longer than this is the exception's type name alone.
_MAX_DETAIL = 200


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every exception it wraps (its args, urllib3's ``reason``, its cause
    and context), each once, outermost first."""
    pending, seen = [(exc, 0)], set()
    while pending:
        current, depth = pending.pop(0)
        if id(current) in seen or depth > _MAX_DEPTH:
            continue
        seen.add(id(current))
        yield current
        inner = [*current.args, getattr(current, "reason", None)]
        inner += [current.__cause__, current.__context__]
        pending += [(e, depth + 1) for e in inner if isinstance(e, BaseException)]


def speaks_no_tls(exc: BaseException) -> bool:
    """True when a TLS handshake failed because the server answered something else than
    TLS (plain HTTP on an https:// URL), not because its certificate was refused."""
    import ssl  # here: the constants above load without the TLS stack (a local walk)

    for inner in _chain(exc):
        if isinstance(inner, ssl.SSLError) and not isinstance(inner, ssl.SSLCertVerificationError):
            said = f"{inner.reason or ''} {inner}".upper()
            if any(reason in said for reason in _NOT_TLS_REASONS):
                return True
    return False


def cause_of(exc: BaseException) -> str:
    """Why ``exc`` left a request without a response, in plain words."""
    import socket
    import ssl

    if speaks_no_tls(exc):
        return NO_TLS
    for inner in _chain(exc):
        if isinstance(inner, ConnectionRefusedError):
            return REFUSED
        if isinstance(inner, socket.gaierror) or type(inner).__name__ == "NameResolutionError":
            return NAME_NOT_RESOLVED
        if isinstance(inner, ssl.SSLCertVerificationError):
            return f"TLS handshake failed: certificate not trusted ({inner.verify_message})"
        if isinstance(inner, ssl.SSLError):
            return f"TLS handshake failed ({inner.reason or inner})"
        if isinstance(inner, ConnectionResetError):
            return "connection reset"
    text = str(exc)
    for marker in ("Connection refused", "Name or service not known", "timed out", "reset"):
        if marker in text:
            return marker
    return type(exc).__name__ if len(text) > _MAX_DETAIL else text
