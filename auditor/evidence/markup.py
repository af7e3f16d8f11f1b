"""What a page's markup cannot hold, read from the bytes it was parsed from: a page-wide
XPath or extractor looking for a name the bytes never spell is skipped.

An attribute or element name comes into the parsed tree only from its own bytes (names
hold no entities; libxml2 lower-cases them; the elements it adds unasked, ``html``,
``head``, ``body``, ``p``, have no attributes), so a name absent from the bytes, case
ignored, is absent from the tree. The converse is not claimed: a name the bytes spell
(in text, a script, another attribute's value) is looked for as before.

Only a page of up to :data:`MAX_SEARCHED` bytes is searched: a demo page's 2 KB cost
microseconds to lower and search, and spare a tenth of its reading; a real page's 300 KB
cost about 0.25 ms to lower and 0.15 ms a name searched for, as much as the XPaths it
would spare (``read_page`` on the fundus pages measured the same with and without), so a
larger page is read as before (every name "may be there").

Touches: nothing.
"""

from __future__ import annotations

__all__ = ["MAX_SEARCHED", "Markup"]

#: Bytes of a page searched at most (module docstring); a larger page may hold any name.
MAX_SEARCHED = 64 * 1024


class Markup:
    """The bytes a tree was parsed from, lowered once, asked which names they may hold."""

    __slots__ = ("_lowered",)

    def __init__(self, source: bytes) -> None:
        self._lowered = source.lower() if len(source) <= MAX_SEARCHED else None

    def may_hold(self, name: bytes) -> bool:
        """False only when ``name`` (lower case ASCII) is nowhere in the bytes, case
        ignored: then no element or attribute of the tree has that name (always True for
        bytes over :data:`MAX_SEARCHED`)."""
        return self._lowered is None or name in self._lowered
