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
Beside it: :mod:`~auditor.walker.sniff` (what the first bytes say, the parser for
the encoding), :mod:`~auditor.walker.feeds` (RSS and Atom bodies) and
:mod:`~auditor.walker.plaintext` (text sitemaps).

Touches: nothing.
"""

from __future__ import annotations

import pyexpat
from collections.abc import Callable, Iterable, Iterator, Mapping

from auditor.http.body import prepend
from auditor.walker.extensions import ExtrasBuilder
from auditor.walker.fastxml import IMAGE_NS, VIDEO_NS, XHTML_NS, FastUrlset
from auditor.walker.feeds import install_feed_handlers
from auditor.walker.plaintext import TextSitemap
from auditor.walker.records import (
    ATOM_NS,
    IMAGE,
    IMAGE_LOC,
    LASTMOD,
    LOC,
    NEWS,
    NEWS_LANGUAGE,
    NEWS_NS,
    NEWS_TITLE,
    SITEMAP_NS,
    VIDEO,
    Record,
    qualified,
    split_name,
)
from auditor.walker.sniff import (
    HTML_START,
    PROBE_SIZE,
    UTF16_BOMS,
    is_utf8,
    make_parser,
    read_head,
)

__all__ = ["FAST_PATH", "FORMAT_KINDS", "Record", "SitemapReader"]

#: Whether readers use the urlset fast path (:mod:`auditor.walker.fastxml`) by default.
#: The exact path alone gives the same records and problems; tests compare the two.
FAST_PATH = True

#: The kinds of file a reader can recognise.
FORMAT_KINDS = ("urlset", "sitemapindex", "rss", "atom", "text")

# Text pending between two end tags is bounded (a whitespace bomb must not pile up).
_MAX_TEXT_PIECES = 8
_MAX_TEXT = 65_536
#: Left in the text buffer in place of a value too long to keep: NUL cannot occur in XML
#: text, so a value that starts with it was dropped, whatever came after it.
_OVERFLOW = "\x00"


class _Stop(Exception):
    """Raised inside an expat callback to stop reading with a problem."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code, self.detail = code, detail


def _layout(kind: str, root_ns: str) -> tuple[frozenset[str], dict[str, int]]:
    """Record element names and field names (to field index) for a urlset or an index."""
    spaces = {root_ns, SITEMAP_NS, ""}
    record = "url" if kind == "urlset" else "sitemap"
    fields = {qualified(ns, "loc"): LOC for ns in spaces}
    fields |= {qualified(ns, "lastmod"): LASTMOD for ns in spaces}
    fields[qualified(NEWS_NS, "publication_date")] = NEWS
    if kind == "urlset":
        fields[qualified(NEWS_NS, "title")] = NEWS_TITLE
        fields[qualified(NEWS_NS, "language")] = NEWS_LANGUAGE
        fields[qualified(IMAGE_NS, "image")] = IMAGE
        fields[qualified(IMAGE_NS, "loc")] = IMAGE_LOC
        fields[qualified(VIDEO_NS, "video")] = VIDEO
    return frozenset(qualified(ns, record) for ns in spaces), fields


#: The name of an hreflang link, as expat gives it.
_XHTML_LINK = qualified(XHTML_NS, "link")
#: What a sitemap index must not hold (Google's index rules): its page entries, and the
#: urlset's hints.
_INDEX_STRANGERS = frozenset(
    qualified(ns, local) for ns in (SITEMAP_NS, "") for local in ("url", "changefreq", "priority")
)


def _root_kind(name: str) -> str | None:
    ns, local = split_name(name)
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

    def __init__(
        self,
        fast: bool | None = None,
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.kind: str | None = None
        self.status = status  # the response's, for naming an HTML page a bot wall
        self.headers = headers or {}
        #: True when the file was an HTML page: only its head was read, to name it.
        self.html = False
        self.fast = FAST_PATH if fast is None else fast
        self.problems: list[tuple[str, str]] = []
        #: True when the only fault was that the input ended mid-document: the
        #: caller knows whether that was the file or a cut (cap, deadline) of its own.
        self.ended_mid_document = False
        self._text: list[str] = []  # text gathered since the last end tag (sitemap files)
        self._record_names: frozenset[str] = frozenset()
        self._root_ns = ""
        #: In an index: how many of each element a sitemap index must not hold
        #: (``url``, ``changefreq``, ``priority``), by local name.
        self.index_strangers: dict[str, int] = {}
        self._links = False  # the XHTML namespace was declared: hreflang links are read
        self._link_start: Callable[[str, dict[str, str]], None] | None = None

    def batches(self, chunks: Iterable[bytes]) -> Iterator[list[Record]]:
        """Yield the file's records in batches, as the bytes arrive."""
        stream = iter(chunks)
        head = read_head(stream)
        if not head:
            self.problems.append(("not-a-sitemap", "empty response"))
            return
        rest = prepend(head, stream)
        probe = head[:PROBE_SIZE]  # decide on the same bytes however the file was chunked
        if HTML_START.match(probe):
            from auditor.http.walls import body_head  # an HTML page's, read alone

            self.html = True
            self.problems.append(self._html_problem(head + body_head(stream)))
            return
        if probe[:1] == b"<" or probe[:2] in UTF16_BOMS:
            yield from self._xml_batches(probe, rest)
        else:
            yield from self._text_batches(rest)

    def _html_problem(self, head: bytes) -> tuple[str, str]:
        """An HTML page where a sitemap should be: a bot wall (``blocked``), else which
        page it is (a login, consent or error page), never parsed."""
        from auditor.http.walls import html_kind, wall_of

        wall = wall_of(self.status, self.headers, head)
        if wall is not None:
            return "blocked", wall.detail()
        kind = html_kind(head)
        page = f"an HTML {kind} page" if kind else "an HTML page"
        return "not-a-sitemap", f"root element html ({page})"

    def _text_batches(self, chunks: Iterator[bytes]) -> Iterator[list[Record]]:
        text = TextSitemap(self.problems)
        for batch in text.batches(chunks):
            self.kind = text.kind
            yield batch
        self.kind = text.kind

    # -- XML ----------------------------------------------------------------
    def _xml_batches(self, head: bytes, chunks: Iterator[bytes]) -> Iterator[list[Record]]:
        parser, transcoder = make_parser(head)
        out: list[Record] = []
        at_end = False
        self._install(parser, out)
        fast = None
        if self.fast and transcoder is None and is_utf8(head):
            fast = FastUrlset(
                parser, out, self._text, self._fast_records, _bound_text, self.body_start
            )
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

    def body_start(self) -> Callable[[str, dict[str, str]], None] | None:
        """The start-tag handler the body needs: hreflang links, once the XHTML
        namespace is declared; None otherwise (no Python call per start tag)."""
        return self._link_start if self._links else None

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
            ns, local = split_name(name)
            if kind is None:
                raise _Stop("not-a-sitemap", f"root element {local}")
            self.kind = kind
            if kind in ("urlset", "sitemapindex") and ns != SITEMAP_NS:
                self.problems.append(("wrong-namespace", f"{local} in namespace {ns or 'none'!r}"))
            if kind in ("urlset", "sitemapindex"):
                self._install_sitemap_body(parser, out, kind, ns)
            else:
                install_feed_handlers(parser, out, kind, ns)

        def declare(_prefix: str | None, uri: str | None) -> None:
            if uri != XHTML_NS or self._links:
                return
            self._links = True
            if self._link_start is not None and parser.StartElementHandler is None:
                parser.StartElementHandler = self._link_start  # the exact reader's body

        parser.StartNamespaceDeclHandler = declare
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
        start tags (but hreflang links, in a file that declares their namespace), so a
        URL costs three Python calls (loc, lastmod, url). Extension elements take the
        branch after the news date: a plain file never reaches it.
        """
        records, fields = _layout(kind, root_ns)
        self._record_names, self._root_ns = records, root_ns
        if kind == "sitemapindex":
            self._install_index_body(parser, out, records, fields)
            return
        loc: str | None = None
        lastmod: str | None = None
        news: str | None = None
        ext: ExtrasBuilder | None = None
        buf = self._text
        clear = buf.clear

        def end(name: str) -> None:
            nonlocal loc, lastmod, news, ext
            index = fields.get(name)
            if index is None:
                if name in records:
                    out.append((loc, lastmod, news if ext is None else ext.record(news)))
                    loc = lastmod = news = ext = None
                clear()
                return
            text = (buf[0] if len(buf) == 1 else "".join(buf)).strip()
            clear()
            if text[:1] == _OVERFLOW:
                text = ""  # too long to keep: dropped, as it arrived in any pieces
            if index == LOC:
                loc = text
            elif index == LASTMOD:
                lastmod = text
            elif index == NEWS:
                news = text
            else:
                ext = ext or ExtrasBuilder()
                _extension(ext, index, text)

        def link(name: str, attrs: dict[str, str]) -> None:
            nonlocal ext
            if name == _XHTML_LINK:
                ext = ext or ExtrasBuilder()
                ext.alternate(attrs)

        self._link_start = link
        parser.StartElementHandler = link if self._links else None
        parser.EndElementHandler = end
        parser.CharacterDataHandler = buf.append

    def _install_index_body(
        self,
        parser: pyexpat.XMLParserType,
        out: list[Record],
        records: frozenset[str],
        fields: dict[str, int],
    ) -> None:
        """A sitemap index: its ``sitemap`` records, and a count of the elements it must
        not hold (a ``url`` entry's loc is not taken for a child)."""
        loc: str | None = None
        lastmod: str | None = None
        buf = self._text
        clear = buf.clear
        strangers = self.index_strangers

        def end(name: str) -> None:
            nonlocal loc, lastmod
            index = fields.get(name)
            if index is None:
                if name in records:
                    out.append((loc, lastmod, None))
                    loc = lastmod = None
                elif name in _INDEX_STRANGERS:
                    local = split_name(name)[1]
                    strangers[local] = strangers.get(local, 0) + 1
                    if local == "url":
                        loc = lastmod = None
                clear()
                return
            text = (buf[0] if len(buf) == 1 else "".join(buf)).strip()
            clear()
            if text[:1] == _OVERFLOW:
                text = ""
            if index == LOC:
                loc = text
            elif index == LASTMOD:
                lastmod = text

        parser.StartElementHandler = None
        parser.EndElementHandler = end
        parser.CharacterDataHandler = buf.append


def _extension(ext: ExtrasBuilder, index: int, text: str) -> None:
    """One extension element's end, into the record's builder."""
    if index == IMAGE:
        ext.images += 1
    elif index == IMAGE_LOC:
        ext.image_loc(text)
    elif index == VIDEO:
        ext.videos += 1
    elif index == NEWS_TITLE:
        ext.title = ext.title or text
    elif index == NEWS_LANGUAGE:
        ext.language = ext.language or text


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
