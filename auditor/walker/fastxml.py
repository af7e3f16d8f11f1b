"""The urlset fast path: C regular expressions read the plain records, expat the rest.

Nearly every urlset is a run of records in one shape: ``<url><loc>…</loc>``, an
optional ``<lastmod>``, ``<changefreq>``/``<priority>`` and image, video or
hreflang extensions, with only ``&amp;`` among entities. For such a run a
compiled pattern is validator and extractor at once: it accepts only
well-formed markup (literal tags, text without ``<``, ``]]>`` or characters
XML forbids, every ``&`` an ``&amp;``), and ``findall`` returns the records
in one C call, with no Python code per element.

Everything else goes through the same expat parser with the exact handlers of
:mod:`auditor.walker.formats`: the prolog and the root (so DTDs and entities
are refused as ever), any record the pattern does not recognise (prefixed
names, CDATA, comments, other entities, attributes, odd namespaces...), and the
end of the file. Expat sees the recognised runs as whitespace of the same line
structure, so its error positions are those of the whole file, and it resumes
exactly where the exact path would be: between two records of the root.

The fast path is only tried where it can be exact: a UTF-8 urlset whose
unprefixed ``url``/``loc``/``lastmod`` are the sitemap's own. It hands the rest
of a file to the exact reader when the file keeps surprising it.

Touches: nothing.
"""

from __future__ import annotations

import itertools
import pyexpat
import re
from collections.abc import Callable, Generator, Iterator
from typing import Any, cast

from auditor.walker.extensions import extras_from_tail
from auditor.walker.recordpattern import (
    IMAGE_NS,
    VALUE,
    VALUE_NO_CR,
    VIDEO_NS,
    XHTML_NS,
    extension_alternatives,
    extension_prefixes,
    record_patterns,
)

__all__ = ["IMAGE_NS", "VIDEO_NS", "XHTML_NS", "FastUrlset"]

# Bytes that need no second look; the rare ones are flagged; any other is a character
# XML 1.0 forbids: a C0 control other than tab, LF and CR, or U+FFFE/U+FFFF in UTF-8.
_RARE_BYTES = b'&]\r"\\'
# LF is kept by the first pass too: the newlines of a chunk are counted on what it leaves.
_PLAIN_BYTES = bytes(b for b in range(0x20, 0x80) if b not in _RARE_BYTES) + b"\t"
_HIGH_BYTES = bytes(range(0x80, 0x100))
_RARE_OR_LF = _RARE_BYTES + b"\n"
_NONCHARACTERS = (b"\xef\xbf\xbe", b"\xef\xbf\xbf")
_AMP, _RSQB, _CR, _QUOTE = 1, 2, 4, 8
_FAST, _EXACT, _STUCK = 0, 1, 2
_BAD_AMP = re.compile(r"&(?!amp;)")
_AMP_STEPS = 32  # ampersands looked at one by one before the pattern takes over
_END = "</url>"
_CARRY_MAX = 131_072  # an unfinished record longer than this: the exact reader
_MAX_DETOURS = 64  # records handed to expat before the fast path gives up on a file
#: Whitespace (standing for records read by pattern) held back from expat before it is fed
#: anyway: one feed a megabyte keeps the Parse calls few and a one-line 50 MB file from
#: building its whole length of spaces at once.
BLANK_FEED_MAX = 1 << 20


class FastUrlset:
    """Reads one UTF-8 XML file through the reader's expat parser, plain records by pattern.

    ``parser`` already has the exact reader's handlers; its ``StartElementHandler``
    is the root handler, which sets the kind and installs the exact handlers.
    ``eligible`` is then asked, with the namespaces the root declares, for the names
    of the record elements (None: not a file for the fast path). ``out`` and ``buf``
    are the exact handlers' record list and text buffer; ``bound`` keeps the latter
    small. Iterate :meth:`batches` once: it returns None when it read the file to
    its end, or the bytes it did not read, for the exact reader's loop.
    """

    def __init__(
        self,
        parser: pyexpat.XMLParserType,
        out: list[Any],
        buf: list[str],
        eligible: Callable[[dict[str | None, str]], frozenset[str] | None],
        bound: Callable[[list[str]], None],
        body_start: Callable[[], Callable[[str, dict[str, str]], None] | None] = lambda: None,
    ) -> None:
        self.parser = parser
        self.out = out
        self.buf = buf
        self.at_end = False  # the final Parse call was made
        # the exact reader's root handler, set before this wrapper (dict attributes: the
        # parser is not in ordered_attributes mode)
        self._root_start = cast("Callable[[str, dict[str, str]], None]", parser.StartElementHandler)
        self._eligible = eligible
        self._bound = bound
        self._body_start = body_start
        self._outer_declare = cast(
            "Callable[[str | None, str | None], None] | None", parser.StartNamespaceDeclHandler
        )
        self._tail_prefixes: tuple[str | None, str | None, str | None] | None = None
        self._declared: dict[str | None, str] = {}
        self._records: frozenset[str] = frozenset()
        self._body_end: Callable[[str], None] | None = None
        self._depth = 0  # -1: the file is not for the fast path
        self._boundary = -1  # byte index of the last end tag of a record of the root
        self._fed = 0  # bytes given to expat
        # what expat has yet to see in place of the records read by pattern: line breaks,
        # then the spaces of the last line (fed before anything else, not per chunk)
        self._breaks = 0
        self._column = 0
        self._detours = 0
        self._extensions = ""
        self._cr: bool | None = None
        self._patterns = record_patterns("", VALUE)
        parser.StartNamespaceDeclHandler = self._declare
        parser.StartElementHandler = self._start

    # -- around the exact handlers ------------------------------------------------
    def _declare(self, prefix: str | None, uri: str | None) -> None:
        self._declared[prefix] = uri or ""
        if self._outer_declare is not None:
            self._outer_declare(prefix, uri)

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        if self._depth == 0:
            parser = self.parser
            parser.StartNamespaceDeclHandler = self._outer_declare
            self._root_start(name, attrs)  # raises to stop; installs the exact handlers
            records = self._eligible(self._declared)
            if records is None:
                self._depth = -1  # the exact handlers stay
                return
            self._records = records
            self._extensions = extension_alternatives(self._declared)
            if self._extensions:
                self._tail_prefixes = extension_prefixes(self._declared)
            self._body_end = parser.EndElementHandler
            parser.StartElementHandler = self._start
            parser.EndElementHandler = self._end
        else:
            start = self._body_start()
            if start is not None:
                start(name, attrs)
        self._depth += 1

    def _end(self, name: str) -> None:
        self._depth -= 1
        self._body_end(name)  # type: ignore[misc]
        if self._depth == 1 and name in self._records:
            self._boundary = self.parser.CurrentByteIndex

    def _unwrap(self) -> None:
        """Leave expat to the exact handlers alone."""
        parser = self.parser
        if self._depth == 0:
            parser.StartNamespaceDeclHandler = self._outer_declare
            parser.StartElementHandler = self._root_start
        elif self._depth > 0:
            parser.StartElementHandler = self._body_start()
            parser.EndElementHandler = self._body_end
        self._depth = -1

    # -- feeding expat ---------------------------------------------------------------
    def _parse(self, text: str) -> None:
        self._flush()
        data = text.encode("utf-8")  # bytes: a str would make expat ignore the declaration
        self.parser.Parse(data, False)
        self._fed += len(data)
        if len(self.buf) > 8:
            self._bound(self.buf)

    def _skip(self, text: str, start: int, stop: int, lf: int, cr: bool) -> None:
        """Records read by pattern: expat is to see whitespace in their place (``lf``: the
        LFs of ``text[start:stop]``; ``cr``: it may hold a CR), counted now and fed by
        :meth:`_flush` before the next thing expat reads."""
        breaks, column = _blank_shape(text, start, stop, lf, cr)
        if breaks:
            self._breaks += breaks
            self._column = column
        else:
            self._column += column
        if self._breaks + self._column > BLANK_FEED_MAX:
            self._flush()

    def _flush(self) -> None:
        """Feed expat the whitespace of the records skipped since it last read: the same
        line breaks and last column, so that its positions are those of the whole file."""
        if not (self._breaks or self._column):
            return
        blank = ("\n" * self._breaks + " " * self._column).encode("ascii")
        self._breaks = self._column = 0
        self.parser.Parse(blank, False)
        self._fed += len(blank)
        if len(self.buf) > 8:
            self._bound(self.buf)

    def _to_boundary(self, text: str, start: int) -> tuple[int, int]:
        """Feed expat from ``start`` through record end tags until one ends a record of
        the root: (FAST, just after it); else all of ``text`` is fed: (EXACT, its end),
        or (STUCK, its end) when no record ended in it at all."""
        state = _STUCK
        self._flush()
        while self._depth >= 0:
            end = text.find(_END, start)
            if end < 0:
                break
            state = _EXACT
            before = self._fed + _byte_length(text[start:end])
            self._parse(text[start : end + len(_END)])
            start = end + len(_END)
            if self._depth == 1 and self._boundary == before:
                return _FAST, start
        self._parse(text[start:])
        return state, len(text)

    # -- reading by pattern ------------------------------------------------------------
    def _plain(self, text: str, start: int, cut: int, odd: int) -> tuple[list[Any], int]:
        """The records the patterns read from ``text[start:cut]``, and where they stop.

        ``odd`` says which rare characters the text may hold (``_AMP``...).
        """
        stop = cut
        if odd & _RSQB:
            end = text.find("]]>", start, cut)
            if end >= 0:
                stop = end
        amp = -1
        if odd & _AMP:
            amp = text.find("&", start, stop)
            if amp >= 0:
                bad = _bad_amp(text, amp, stop)
                if bad >= 0:
                    stop = bad
        cr = bool(odd & _CR) and text.find("\r", start, stop) >= 0
        if cr is not self._cr:
            self._cr = cr
            self._patterns = record_patterns(self._extensions, VALUE_NO_CR if cr else VALUE)
        records, run = self._patterns
        decoded = 0 <= amp < stop and self._tail_prefixes is None
        if decoded:  # every & here starts an &amp; (above): decoded at once, then read
            found = records.findall(_amp_decoded(text, start, stop, amp))
        else:
            found = records.findall(text, start, stop)
        if found and not found[-1][0]:  # the rest does not start with a plain record
            found.pop()
            stop = run.match(text, start, stop).end()  # type: ignore[union-attr]
        if 0 <= amp < stop and not decoded:  # extension tails decode their own
            found = [_unescape(r) if "&" in r[0] or "&" in r[1] else r for r in found]
        if self._tail_prefixes is not None:
            image, video, xhtml = self._tail_prefixes
            found = [
                (r[0], r[1], extras_from_tail(r[2], image, video, xhtml)) if r[2] else r
                for r in found
            ]
        return found, stop

    def batches(
        self, chunks: Iterator[bytes]
    ) -> Generator[list[Any], None, Iterator[bytes] | None]:
        """Yield record batches as the bytes arrive; see the class docstring."""
        out = self.out
        pending = b""  # the start of a character cut by the chunk's end
        text = ""  # decoded, not yet given to expat
        carried = 0  # the rare characters text may hold
        after = 0  # the LFs of text[start:]: counted once, by _rare, as the bytes arrive
        state = _EXACT
        for chunk in chunks:
            data = pending + chunk if pending else chunk
            try:
                decoded, pending = data.decode("utf-8"), b""
            except UnicodeDecodeError as exc:
                if exc.end != len(data) or exc.reason != "unexpected end of data":
                    return self._hand_over(text, data, chunks)
                decoded, pending = data[: exc.start].decode("utf-8"), data[exc.start :]
            odd, lfs = _rare(data)
            if odd < 0:  # a character XML forbids: expat says where
                return self._hand_over(text, data, chunks)
            text = text + decoded if text else decoded
            odd |= carried
            after += lfs
            start = 0
            if state != _FAST:
                state, start = self._to_boundary(text, 0)
                after -= text.count("\n", 0, start)  # what expat read itself
            while state == _FAST:
                end = text.rfind(_END, start)
                if end < 0:  # no record ends in what is left (not rfind's -1 + 6 = 5)
                    break
                cut = end + len(_END)
                found, stop = self._plain(text, start, cut, odd)
                if stop > start:
                    rest = text.count("\n", stop)  # a record's end at most, mostly
                    self._skip(text, start, stop, after - rest, bool(odd & _CR))
                    after = rest
                    out.extend(found)
                if stop == cut:
                    start = cut
                    break
                self._flush()
                self.buf.clear()  # only whitespace since expat's last end tag
                self._detours += 1
                state, start = self._to_boundary(text, stop)
                after -= text.count("\n", stop, start)
            text = text[start:]
            carried = odd if text else 0
            after = after if text else 0
            if state == _STUCK or self._depth < 0 or self._detours > _MAX_DETOURS:
                return self._hand_over(text, pending, chunks)
            if len(text) > _CARRY_MAX:
                return self._hand_over(text, pending, chunks)
            if out:
                yield out[:]
                out.clear()
        self._parse(text)
        self.at_end = True
        self.parser.Parse(pending, True)
        return None

    def _hand_over(self, text: str, data: bytes, chunks: Iterator[bytes]) -> Iterator[bytes]:
        """What the exact reader reads on: ``text`` and ``data`` unread, then ``chunks``."""
        self._flush()
        self._unwrap()
        return itertools.chain((text.encode("utf-8") + data,), chunks)


def _rare(data: bytes) -> tuple[int, int]:
    """Which rare characters ``data`` holds, as ``_AMP | _RSQB...`` bits (-1 when it holds
    a character XML forbids), and its LFs (UTF-8 ``data``, already decoded without error).

    One pass over the bytes: what it leaves is short (the rare characters, the LFs and
    any non-ASCII), and everything else is read from that.
    """
    odd = data.translate(None, _PLAIN_BYTES)
    lfs = odd.count(b"\n")
    if len(odd) == lfs:
        return 0, lfs
    other = odd.translate(None, _RARE_OR_LF)
    if other and (other.translate(None, _HIGH_BYTES) or any(n in data for n in _NONCHARACTERS)):
        return -1, lfs
    bits = (
        (_AMP if b"&" in odd else 0)
        | (_RSQB if b"]" in odd else 0)
        | (_CR if b"\r" in odd else 0)
        | (_QUOTE if b'"' in odd or b"\\" in odd else 0)
    )
    return bits, lfs


def _bad_amp(text: str, at: int, stop: int) -> int:
    """Where the first ``&`` that does not start ``&amp;`` lies in ``text[at:stop]``
    (``text[at]`` is an ``&``), or -1: ``_BAD_AMP.search`` with a ``memchr`` per ``&``
    for the first few, which is all a sitemap usually holds; the pattern for the rest."""
    find, starts = text.find, text.startswith
    for _ in range(_AMP_STEPS):
        if not starts("&amp;", at, stop):
            return at
        at = find("&", at + 5, stop)
        if at < 0:
            return -1
    bad = _BAD_AMP.search(text, at, stop)
    return -1 if bad is None else bad.start()


def _amp_decoded(text: str, start: int, stop: int, amp: int) -> str:
    """``text[start:stop]`` with each ``&amp;`` made ``&``, where every ``&`` starts an
    ``&amp;`` and ``amp`` is the first: one ``memchr`` for each, one copy of the text
    (``str.replace`` searches the five characters at every position, 57 us a 64 KB chunk)."""
    pieces = []
    at = start
    while 0 <= amp < stop:
        pieces.append(text[at : amp + 1])
        at = amp + 5
        amp = text.find("&", at, stop)
    pieces.append(text[at:stop])
    return "".join(pieces)


def _unescape(record: tuple[str, str, str]) -> tuple[str, str, str]:
    loc, lastmod, news = record
    return loc.replace("&amp;", "&"), lastmod.replace("&amp;", "&"), news


def _byte_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _blank(text: str, start: int, stop: int, lf: int, cr: bool = True) -> str:
    """Whitespace that expat counts as ``text[start:stop]``, which holds ``lf`` LFs: the
    same line breaks, the same last column (expat counts CR LF, CR and LF as one break
    each). ``cr`` False says the text holds no CR (no pass over it at all)."""
    breaks, column = _blank_shape(text, start, stop, lf, cr)
    return "\n" * breaks + " " * column


def _blank_shape(text: str, start: int, stop: int, lf: int, cr: bool = True) -> tuple[int, int]:
    """The line breaks of ``text[start:stop]`` (which holds ``lf`` LFs) as expat counts
    them, and the characters after the last one (all of them when there is none)."""
    if not cr:
        return lf, stop - 1 - max(text.rfind("\n", start, stop), start - 1)
    crs = text.count("\r", start, stop)
    breaks = lf + crs - text.count("\r\n", start, stop) if crs else lf
    last = max(text.rfind("\n", start, stop), text.rfind("\r", start, stop), start - 1)
    return breaks, stop - 1 - last
