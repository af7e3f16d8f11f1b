"""Streaming readers for every sitemap format: urlset, sitemapindex, RSS, Atom, text.

The XML reader drives expat directly (``pyexpat``) with a handful of callbacks:
no element tree is built, so memory stays flat whatever the file size. It is
as safe as defusedxml (the oracle of its tests): a DTD is refused outright (a
sitemap never needs one), and so are entity declarations and external
references, before expat acts on them. A UTF-8 urlset goes through the fast
path of :mod:`auditor.walker.fastxml`, which reads its plain records by C
pattern and gives expat the rest: the same records and problems, about twice
as fast as the C ElementTree parser.

A reader turns a stream of byte chunks into batches of raw ``Record`` tuples
(loc, lastmod, news publication date), exactly as written but stripped; the
walker judges them. Problems found while reading are kept on the reader.
"""

from __future__ import annotations

import codecs
import pyexpat
import re
from collections.abc import Iterable, Iterator

from auditor.http.body import prepend
from auditor.walker.fastxml import FastUrlset

__all__ = ["FAST_PATH", "FORMAT_KINDS", "Record", "SitemapReader"]

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
ATOM_NS = "http://www.w3.org/2005/Atom"
_SEP = " "  # expat namespace separator: "uri local"

#: Whether readers use the urlset fast path (:mod:`auditor.walker.fastxml`) by default.
#: The exact path alone gives the same records and problems; tests compare the two.
FAST_PATH = True

#: The kinds of file a reader can recognise.
FORMAT_KINDS = ("urlset", "sitemapindex", "rss", "atom", "text")

Record = tuple[str | None, str | None, str | None]  # loc, lastmod, news publication date

_WHITESPACE = b" \t\r\n"
#: Bytes read ahead before judging a file: room for a BOM, an XML declaration, an HTML start.
_PROBE_SIZE = 1024
_UTF8_BOM = codecs.BOM_UTF8
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_DECLARED_ENCODING = re.compile(rb"""^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")
_EXPAT_NATIVE = frozenset({"utf-8", "utf-16", "utf-16-le", "utf-16-be", "ascii", "latin-1"})
# Python codec -> the name expat knows, for declarations spelt otherwise ("utf8", "latin1").
_EXPAT_NAMES = {"utf-8": "utf-8", "ascii": "us-ascii", "latin-1": "iso-8859-1"}
_EXPAT_SPELLINGS = frozenset({"utf-8", "us-ascii", "iso-8859-1", "utf-16", "utf-16le", "utf-16be"})
# An HTML page: optional comments, then an HTML doctype (any case) or an <html> element.
# A doctype with an internal subset ("[") is not HTML's: it goes to expat, which refuses it.
_HTML_START = re.compile(
    rb"(?:<!--.*?-->\s*)*<(?:!doctype\s+html(?:\s[^\[>]*)?>|html[\s>])", re.I | re.S
)
_URL_START = re.compile(r"https?://", re.IGNORECASE)
_LINE_END = re.compile(r"\r\n?|\n")
_LOC, _LASTMOD, _NEWS = 0, 1, 2
# Text pending between two end tags is bounded (a whitespace bomb must not pile up).
_MAX_TEXT_PIECES = 8
_MAX_TEXT = 65_536
#: Left in the text buffer in place of a value too long to keep: NUL cannot occur in XML
#: text, so a value that starts with it was dropped, whatever came after it.
_OVERFLOW = "\x00"

# Bytes invalid in a transcoded encoding become U+FFFE, a character XML forbids:
# expat then stops exactly there, and what came before is kept.
_INVALID_BYTES = "auditor-invalid-bytes"


def _mark_invalid_bytes(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "\ufffe", exc.end


codecs.register_error(_INVALID_BYTES, _mark_invalid_bytes)


class _Stop(Exception):
    """Raised inside an expat callback to stop reading with a problem."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code, self.detail = code, detail


def _name(ns: str, local: str) -> str:
    return f"{ns}{_SEP}{local}" if ns else local


def _split(name: str) -> tuple[str, str]:
    ns, _, local = name.rpartition(_SEP)
    return ns, local


def _layout(kind: str, root_ns: str) -> tuple[frozenset[str], dict[str, int]]:
    """Record element names and field names (to field index) for a kind of file."""
    if kind in ("urlset", "sitemapindex"):
        spaces = {root_ns, SITEMAP_NS, ""}
        record = "url" if kind == "urlset" else "sitemap"
        fields = {_name(ns, "loc"): _LOC for ns in spaces}
        fields |= {_name(ns, "lastmod"): _LASTMOD for ns in spaces}
        fields[_name(NEWS_NS, "publication_date")] = _NEWS
        return frozenset(_name(ns, record) for ns in spaces), fields
    if kind == "rss":
        return frozenset({_name(root_ns, "item")}), {
            _name(root_ns, "link"): _LOC,
            _name(root_ns, "pubDate"): _LASTMOD,
        }
    return frozenset({_name(ATOM_NS, "entry")}), {_name(ATOM_NS, "updated"): _LASTMOD}


def _root_kind(name: str) -> str | None:
    ns, local = _split(name)
    if local in ("urlset", "sitemapindex"):
        return local
    if local == "rss":
        return "rss"
    if local == "feed" and ns == ATOM_NS:
        return "atom"
    return None


class SitemapReader:
    """Reads one sitemap file, streaming. Iterate :meth:`batches` once.

    Afterwards ``kind`` is one of ``FORMAT_KINDS`` (or None when the file was not
    a sitemap) and ``problems`` lists ``(code, detail)`` pairs.
    """

    def __init__(self, fast: bool | None = None) -> None:
        self.kind: str | None = None
        self.fast = FAST_PATH if fast is None else fast
        self.problems: list[tuple[str, str]] = []
        #: True when the only fault was that the input ended mid-document: the
        #: caller knows whether that was the file or a cut (cap, deadline) of its own.
        self.ended_mid_document = False
        self._text: list[str] = []  # text gathered since the last end tag (sitemap files)
        self._record_names: frozenset[str] = frozenset()
        self._root_ns = ""

    def batches(self, chunks: Iterable[bytes]) -> Iterator[list[Record]]:
        """Yield the file's records in batches, as the bytes arrive."""
        stream = iter(chunks)
        head = _read_head(stream)
        if not head:
            self.problems.append(("not-a-sitemap", "empty response"))
            return
        rest = prepend(head, stream)
        probe = head[:_PROBE_SIZE]  # decide on the same bytes however the file was chunked
        if _HTML_START.match(probe):
            self.problems.append(("not-a-sitemap", "root element html (an HTML page)"))
            return
        if probe[:1] == b"<" or probe[:2] in _UTF16_BOMS:
            yield from self._xml_batches(probe, rest)
        else:
            yield from self._text_batches(rest)

    # -- plain text ---------------------------------------------------------
    def _text_batches(self, chunks: Iterator[bytes]) -> Iterator[list[Record]]:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        for chunk in chunks:
            # A bare CR ends a line too; a CRLF split across chunks only makes a blank line.
            lines = _LINE_END.split(pending + decoder.decode(chunk))
            pending = lines.pop()
            batch = self._text_records(lines)
            if batch is None:
                return
            if batch:
                yield batch
        batch = self._text_records([pending + decoder.decode(b"", final=True)])
        if batch:
            yield batch
        if self.kind is None and not self.problems:  # only characters str.strip() removes
            self.problems.append(("not-a-sitemap", "plain text without a single URL"))

    def _text_records(self, lines: list[str]) -> list[Record] | None:
        batch: list[Record] = []
        for line in lines:
            url = line.strip()
            if not url:
                continue
            if self.kind is None:
                if not _URL_START.match(url):
                    self.problems.append(
                        ("not-a-sitemap", f"plain text whose first line is not a URL: {url[:80]!r}")
                    )
                    return None
                self.kind = "text"
            batch.append((url, None, None))
        return batch

    # -- XML ----------------------------------------------------------------
    def _xml_batches(self, head: bytes, chunks: Iterator[bytes]) -> Iterator[list[Record]]:
        parser, transcoder = _make_parser(head)
        out: list[Record] = []
        at_end = False
        self._install(parser, out)
        fast = None
        if self.fast and transcoder is None and _utf8(head):
            fast = FastUrlset(parser, out, self._text, self._fast_records, _bound_text)
        rest: Iterator[bytes] | None = chunks
        try:
            if fast is not None:  # it reads as far as it can, then hands the rest over
                rest = yield from fast.batches(chunks)
            for data in _feed_sizes(parser, rest) if rest is not None else ():
                if transcoder is not None:
                    parser.Parse(transcoder.decode(data), False)
                else:
                    parser.Parse(data, False)
                if len(self._text) > _MAX_TEXT_PIECES:
                    _bound_text(self._text)
                if out:
                    yield out[:]
                    out.clear()
            if rest is not None:
                at_end = True
                parser.Parse(b"", True)
        except _Stop as stop:
            self.problems.append((stop.code, stop.detail))
        except pyexpat.ExpatError as exc:
            self.ended_mid_document = at_end or (fast is not None and fast.at_end)
            self._expat_problem(parser, exc)
        except (LookupError, ValueError) as exc:  # unknown or broken declared encoding
            self.problems.append(("not-well-formed", f"encoding: {exc}"))
        if out:
            yield out

    def _fast_records(self, declared: dict[str | None, str]) -> frozenset[str] | None:
        """The record names of a urlset the fast path can read exactly, else None.

        Its unprefixed ``url``, ``loc`` and ``lastmod`` must be the file's own: the
        default namespace the root declares is one the exact handlers read.
        """
        default = declared.get(None, "")
        if self.kind != "urlset" or default not in (self._root_ns, SITEMAP_NS, ""):
            return None
        return self._record_names

    def _expat_problem(self, parser: pyexpat.XMLParserType, exc: pyexpat.ExpatError) -> None:
        message = pyexpat.errors.messages[exc.code] if exc.code else str(exc)
        where = f"line {exc.lineno}, column {exc.offset}"
        if self.kind is None:  # broke before any root element: not XML we can use
            self.problems.append(("not-a-sitemap", f"no XML root element ({message} at {where})"))
        else:
            self.problems.append(("not-well-formed", f"{message} at {where}"))

    def _install(self, parser: pyexpat.XMLParserType, out: list[Record]) -> None:
        def doctype(name: str, _system: str | None, _public: str | None, has_subset: bool) -> None:
            if name.lower() == "html" and not has_subset:
                raise _Stop("not-a-sitemap", "root element html (an HTML page)")
            raise _Stop("forbidden-xml", f"DTD declared (<!DOCTYPE {name}>)")

        def entity(name: str, *_args: object) -> None:
            raise _Stop("forbidden-xml", f"entity declaration ({name})")

        def external(*_args: object) -> int:
            raise _Stop("forbidden-xml", "external entity reference")

        def root_start(name: str, attrs: dict[str, str]) -> None:
            kind = _root_kind(name)
            ns, local = _split(name)
            if kind is None:
                raise _Stop("not-a-sitemap", f"root element {local}")
            self.kind = kind
            if kind in ("urlset", "sitemapindex") and ns != SITEMAP_NS:
                self.problems.append(("wrong-namespace", f"{local} in namespace {ns or 'none'!r}"))
            if kind in ("urlset", "sitemapindex"):
                self._install_sitemap_body(parser, out, kind, ns)
            else:
                self._install_feed_body(parser, out, kind, ns)

        parser.StartDoctypeDeclHandler = doctype
        parser.EntityDeclHandler = entity
        parser.UnparsedEntityDeclHandler = entity
        parser.ExternalEntityRefHandler = external
        parser.StartElementHandler = root_start

    def _install_sitemap_body(
        self, parser: pyexpat.XMLParserType, out: list[Record], kind: str, root_ns: str
    ) -> None:
        """The hot path: urlset and sitemapindex, read with end-of-element callbacks only.

        All text goes straight into a list through its C ``append``; each end tag
        takes the text gathered since the previous one (in a sitemap, only
        whitespace lies between elements) and clears it. No Python code runs for
        start tags, so a URL costs three Python calls (loc, lastmod, url).
        """
        records, fields = _layout(kind, root_ns)
        self._record_names, self._root_ns = records, root_ns
        loc: str | None = None
        lastmod: str | None = None
        news: str | None = None
        buf = self._text
        clear = buf.clear

        def end(name: str) -> None:
            nonlocal loc, lastmod, news
            index = fields.get(name)
            if index is None:
                if name in records:
                    out.append((loc, lastmod, news))
                    loc = lastmod = news = None
                clear()
                return
            text = (buf[0] if len(buf) == 1 else "".join(buf)).strip()
            clear()
            if text[:1] == _OVERFLOW:
                text = ""  # too long to keep: dropped, as it arrived in any pieces
            if index == _LOC:
                loc = text
            elif index == _LASTMOD:
                lastmod = text
            else:
                news = text

        parser.StartElementHandler = None
        parser.EndElementHandler = end
        parser.CharacterDataHandler = buf.append

    def _install_feed_body(
        self, parser: pyexpat.XMLParserType, out: list[Record], kind: str, root_ns: str
    ) -> None:
        records, fields = _layout(kind, root_ns)
        # Feeds: Atom's URL is an attribute of <link>; <id> (Atom) and a permalink
        # <guid> (RSS) stand in when an entry has no link.
        link_name = _name(ATOM_NS, "link") if kind == "atom" else None
        fallback_name = {"atom": _name(ATOM_NS, "id"), "rss": _name(root_ns, "guid")}.get(kind)
        is_rss = kind == "rss"
        loc: str | None = None
        lastmod: str | None = None
        news: str | None = None
        entry_id: str | None = None
        field = -1  # index of the field being read, -1 outside one
        field_name = ""
        in_record = False
        buf: list[str] = []
        # Text is collected only inside a field: the handler is the list's own C
        # append, set at the field's start and removed at its end, so expat never
        # calls Python for the whitespace between elements.
        collect = buf.append

        def start(name: str, attrs: dict[str, str]) -> None:
            nonlocal loc, lastmod, news, entry_id, field, field_name, in_record
            if name in records:
                loc = lastmod = news = entry_id = None
                in_record = True
            elif in_record:
                index = fields.get(name)
                if index is not None:
                    field, field_name = index, name
                    buf.clear()
                    parser.CharacterDataHandler = collect
                elif name == link_name:
                    href = attrs.get("href")
                    if loc is None and href and attrs.get("rel", "alternate") == "alternate":
                        loc = href.strip()
                elif name == fallback_name and not (
                    is_rss and attrs.get("isPermaLink", "true").strip().lower() == "false"
                ):
                    field, field_name = 3, name
                    buf.clear()
                    parser.CharacterDataHandler = collect

        def end(name: str) -> None:
            nonlocal loc, lastmod, news, entry_id, field, in_record
            if field >= 0:
                if name != field_name:
                    return
                parser.CharacterDataHandler = None
                text = "".join(buf).strip()
                if field == _LOC:
                    loc = text
                elif field == _LASTMOD:
                    lastmod = text
                elif field == _NEWS:
                    news = text
                else:
                    entry_id = text
                field = -1
            elif name in records:
                in_record = False
                if loc is None and entry_id and _URL_START.match(entry_id):
                    loc = entry_id  # a feed entry's id or permalink guid, when it is a URL
                out.append((loc, lastmod, news))

        parser.StartElementHandler = start
        parser.EndElementHandler = end


def _read_head(stream: Iterator[bytes]) -> bytes:
    """The file's first bytes, past leading whitespace and a UTF-8 BOM.

    At least ``_PROBE_SIZE`` bytes unless the file is shorter, so that what is
    judged from the head (BOM, XML declaration, HTML) is the same however the
    bytes arrived: a network read, a gzip step or a dripping server may hand
    out the first bytes one at a time.
    """
    head = b""
    judged_bom = False
    for chunk in stream:
        head = (head + chunk).lstrip(_WHITESPACE)
        if not judged_bom and len(head) >= len(_UTF8_BOM):
            judged_bom = True
            if head.startswith(_UTF8_BOM):
                head = head[len(_UTF8_BOM) :].lstrip(_WHITESPACE)
        if judged_bom and len(head) >= _PROBE_SIZE:
            break
    return head


def _bound_text(buf: list[str]) -> None:
    """Keep the text pending between two end tags small whatever the file holds.

    Between elements there is only whitespace, which is dropped; a value longer
    than any URL could be (the protocol caps a loc at 2,048 characters) is
    dropped too, rather than held in memory whole, and reads as empty however the
    bytes arrived (:data:`_OVERFLOW` marks it).
    """
    text = "".join(buf).lstrip()
    buf.clear()
    buf.append(text if len(text) <= _MAX_TEXT else _OVERFLOW)


def _feed_sizes(parser: pyexpat.XMLParserType, chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The chunks, gathered into ever larger pieces while expat is stuck in one token.

    expat before 2.6 re-scans an unfinished token from its start at every feed,
    so a 50 MB comment fed in 64 KiB pieces costs quadratic time. Doubling the
    piece while no progress is made keeps the total work linear.
    """
    pending: list[bytes] = []
    size = need = 0
    for chunk in chunks:
        pending.append(chunk)
        size += len(chunk)
        if size < need:
            continue
        data = pending[0] if len(pending) == 1 else b"".join(pending)
        pending.clear()
        size = 0
        before = parser.CurrentByteIndex
        yield data
        need = 2 * len(data) if parser.CurrentByteIndex == before else 0
    if pending:
        yield b"".join(pending)


def _make_parser(head: bytes) -> tuple[pyexpat.XMLParserType, codecs.IncrementalDecoder | None]:
    """An expat parser for this document, transcoding multi-byte legacy encodings to UTF-8."""
    declared = _DECLARED_ENCODING.match(head)
    transcoder = None
    forced = None
    if declared and not head.startswith(_UTF16_BOMS):
        name = declared.group(1).decode("ascii")
        codec = _codec_name(name)
        if codec in _EXPAT_NAMES and name.lower() not in _EXPAT_SPELLINGS:
            forced = _EXPAT_NAMES[codec]  # an alias expat does not know, e.g. "utf8"
        elif codec is not None and codec not in _EXPAT_NATIVE and not _single_byte(codec):
            transcoder = codecs.getincrementaldecoder(codec)(errors=_INVALID_BYTES)
            forced = "utf-8"
    parser = pyexpat.ParserCreate(encoding=forced, namespace_separator=_SEP)
    parser.buffer_text = True
    parser.buffer_size = 65_536
    parser.ordered_attributes = False
    parser.SetParamEntityParsing(pyexpat.XML_PARAM_ENTITY_PARSING_NEVER)
    return parser, transcoder


def _utf8(head: bytes) -> bool:
    """True when ``head`` shows a UTF-8 document: declared so, or declaring nothing."""
    if head.startswith(_UTF16_BOMS):
        return False
    if b"<?xml".startswith(head[:5]) and (not head.startswith(b"<?xml") or b"?>" not in head):
        return False  # a declaration not seen whole yet
    declared = _DECLARED_ENCODING.match(head)
    return declared is None or _codec_name(declared.group(1).decode("ascii")) == "utf-8"


def _codec_name(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _single_byte(codec: str) -> bool:
    try:
        return len(bytes(range(256)).decode(codec, errors="replace")) == 256
    except (LookupError, ValueError):
        return False
