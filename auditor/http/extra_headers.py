"""Headers a user adds to every request (``--header "Name: value"``): checked, kept secret.

A site may give its partners a cookie or an API key to send. Such a header goes on
every request auditor makes (robots.txt, sitemaps, pages), but never replaces what
auditor itself must send: a ``User-Agent`` given is refused, since its contact is how a
site's operator reaches whoever runs auditor; so are the headers the door decides
itself (the encodings it can decode, the connection's framing, the conditional
validators). Values are secrets: they are never logged, never put in a report or the
history, and left out of the options' ``repr``.

Touches: nothing.
"""

from __future__ import annotations

import re

__all__ = ["RESERVED_HEADERS", "HeaderError", "check_header", "parse_header"]

#: Header names a user may not set (lower case), with why.
RESERVED_HEADERS = {
    "user-agent": "auditor's User-Agent names its contact (--contact) and is never replaced",
    "host": "the host comes from the URL",
    "accept-encoding": "auditor asks only for the encodings it can decode",
    "connection": "the connection is auditor's to manage",
    "content-length": "a GET has no body",
    "transfer-encoding": "a GET has no body",
    "te": "the connection is auditor's to manage",
    "if-none-match": "conditional requests are auditor's own (the history's validators)",
    "if-modified-since": "conditional requests are auditor's own (the history's validators)",
}
#: RFC 9110 token characters: a header name.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: Visible ASCII with inner spaces and tabs: a value no line break can hide in.
_VALUE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?|")
MAX_HEADER_LENGTH = 8_192


class HeaderError(ValueError):
    """A header that cannot be sent; the message names the header, never its value."""


def parse_header(text: str) -> tuple[str, str]:
    """``"Name: value"`` as a checked ``(name, value)`` pair; raises :class:`HeaderError`."""
    name, colon, value = text.partition(":")
    if not colon:
        raise HeaderError(f"a header is written 'Name: value', got no ':' after {name[:40]!r}")
    return check_header(name.strip(), value.strip(" \t"))


def check_header(name: str, value: str) -> tuple[str, str]:
    """``(name, value)`` when it may be sent on every request; raises :class:`HeaderError`
    (the message never quotes the value: it may be a secret)."""
    if not _TOKEN.fullmatch(name):
        raise HeaderError(f"not a header name: {name[:40]!r}")
    why = RESERVED_HEADERS.get(name.lower())
    if why is not None:
        raise HeaderError(f"the {name} header cannot be given: {why}")
    if len(value) > MAX_HEADER_LENGTH or not _VALUE.fullmatch(value):
        raise HeaderError(
            f"the value of the {name} header is not sendable (visible ASCII, at most "
            f"{MAX_HEADER_LENGTH:,} characters, no line break)"
        )
    return name, value
