"""Where a redirect may lead, and how long a server asks a client to wait: the rules
:class:`~auditor.http.client.HttpClient` follows (the same origin, and the one step up
to TLS), and ``Retry-After`` read as seconds.

Touches: nothing.
"""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime
from urllib.parse import SplitResult, urljoin, urlsplit

from auditor.http.hosts import host_key

__all__ = [
    "REDIRECT_STATUSES",
    "off_origin",
    "redirect_target",
    "retry_after_seconds",
    "same_origin",
]  # fmt: skip

#: The statuses whose ``Location`` a client follows.
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def same_origin(base: str, target: str) -> bool:
    """True when ``target`` is on ``base``'s origin: the same scheme, host and port.

    One step counts as staying: the ``https`` upgrade of the same host name on the
    default ports (``http://h/`` or ``http://h:80/`` to ``https://h/``), the way sites
    move to TLS; it gives nothing up. The reverse, a downgrade to plain ``http``,
    never does, and another port is another origin.
    """
    return off_origin(base, target) is None


def redirect_target(current: str, location: str) -> str | None:
    """The absolute URL a ``Location`` points at, or None when it cannot be parsed
    (an unclosed IPv6 bracket, a port that is not a number)."""
    try:
        target = urljoin(current, location)
        urlsplit(target).port  # noqa: B018 - validates the host and port
    except ValueError:
        return None
    return target


def off_origin(base: str, target: str) -> str | None:
    """Why ``target`` is not on ``base``'s origin (see :func:`same_origin`), or None."""
    a, b = urlsplit(base), urlsplit(target)
    if b.scheme not in _DEFAULT_PORTS:
        return "to a URL that is not http(s)"
    if not b.hostname or host_key(a.hostname or "") != host_key(b.hostname):
        return "to another host"
    if a.scheme == "https" and b.scheme == "http":
        return "from https down to http (never followed)"
    ports = _port(a), _port(b)
    if a.scheme == b.scheme and ports[0] == ports[1] and ports[0] is not None:
        return None
    if (a.scheme, b.scheme, *ports) == ("http", "https", 80, 443):
        return None  # the upgrade to TLS on the default ports
    return "to another port"


def _port(parts: SplitResult) -> int | None:
    try:
        return parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:  # not a number, or out of range
        return None


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)
