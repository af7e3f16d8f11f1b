"""Conditional requests: a previous response's validators, sent back as request headers.

``If-None-Match`` carries the ETag and ``If-Modified-Since`` the Last-Modified date,
both exactly as the server wrote them (RFC 9110, 13.1). A server that has not changed
the resource answers 304 Not Modified with no body; one that ignores the headers
answers 200 as usual. The values come from a response, so from the web: only one a
server could legitimately have sent is sent back (visible ASCII, bounded; a readable
HTTP date), never one that would put a line break or a control character on the wire.

Touches: nothing.
"""

from __future__ import annotations

import re

__all__ = ["MAX_VALIDATOR_LENGTH", "conditional_headers"]

#: Longer validators are not sent back (real ETags are hashes, tens of characters).
MAX_VALIDATOR_LENGTH = 1_024
_VISIBLE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")


def conditional_headers(etag: str | None, last_modified: str | None) -> dict[str, str]:
    """The request headers that ask for a resource only if it changed since a response
    that carried ``etag`` and ``last_modified`` (either may be None); empty when neither
    can be sent."""
    headers: dict[str, str] = {}
    if (value := _plain(etag)) is not None:
        headers["If-None-Match"] = value
    if (value := _plain(last_modified)) is not None and _is_http_date(value):
        headers["If-Modified-Since"] = value
    return headers


def _plain(value: str | None) -> str | None:
    """``value`` stripped, when it is visible ASCII (inner spaces allowed) and not too long."""
    if value is None:
        return None
    value = value.strip(" \t")
    if len(value) > MAX_VALIDATOR_LENGTH or not _VISIBLE.fullmatch(value):
        return None
    return value


def _is_http_date(value: str) -> bool:
    import email.utils  # here: a walk without a stored Last-Modified never loads email

    try:
        return email.utils.parsedate_to_datetime(value) is not None
    except (TypeError, ValueError, IndexError):
        return False
