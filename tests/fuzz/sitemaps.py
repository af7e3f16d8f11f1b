"""Structure-aware sitemap generators: a model of a file, rendered many ways, then mutated.

A :class:`Sitemap` is what a file *means* (its kind and entries); :func:`render`
writes it in one of many legal styles (namespace prefixes, comments, CDATA,
character references, extension elements, element order), :func:`encode` in one
of many encodings with a matching declaration, and :func:`expected` says which
records a correct reader must return. Mutations (truncation, insertion of
hostile tokens, splices) and transports (chunk boundaries, gzip members) are
layered on top by the strategies at the end.
"""

from __future__ import annotations

import codecs
import gzip
import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from email.utils import format_datetime
from xml.sax.saxutils import escape, quoteattr

from hypothesis import strategies as st

from auditor.models import Extensions
from auditor.walker.extensions import MAX_ALTERNATES, RecordExtras
from auditor.walker.formats import Record, SitemapReader

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
XHTML_NS = "http://www.w3.org/1999/xhtml"
VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"
ATOM_NS = "http://www.w3.org/2005/Atom"
ORIGIN = "https://example.com"
KINDS = ("urlset", "sitemapindex", "rss", "atom", "text")
#: Characters each encoding can carry beyond ASCII (the URLs are drawn from these).
ENCODINGS: dict[str, str] = {
    "utf-8": "éüß日本語€😀ñ",
    "utf-8-sig": "éü日本€",
    "utf-16-le": "éü日本€😀",
    "utf-16-be": "éü日本€",
    "iso-8859-1": "éüñß",
    "windows-1252": "€éüñ",
    "iso-8859-5": "жяЖ",
    "koi8-r": "жяЖ",
    "shift_jis": "日本語テスト",
    "euc-jp": "日本語",
    "gb18030": "中文汉字",
    "big5": "中文",
    "euc-kr": "한국어",
    "us-ascii": "",
}
#: How each encoding may be spelt in the declaration (aliases expat does not know included).
SPELLINGS: dict[str, tuple[str, ...]] = {
    "utf-8": ("UTF-8", "utf-8", "utf8", None),
    "utf-8-sig": ("UTF-8", None),
    "utf-16-le": ("UTF-16", "utf-16"),
    "utf-16-be": ("UTF-16",),
    "iso-8859-1": ("ISO-8859-1", "latin1", "latin-1"),
    "windows-1252": ("windows-1252", "cp1252"),
    "iso-8859-5": ("ISO-8859-5",),
    "koi8-r": ("KOI8-R",),
    "shift_jis": ("Shift_JIS", "sjis", "shift-jis"),
    "euc-jp": ("EUC-JP",),
    "gb18030": ("GB18030",),
    "big5": ("Big5",),
    "euc-kr": ("EUC-KR",),
    "us-ascii": ("US-ASCII", "ascii"),
}
_PATH_ASCII = "abcdefghijklmnopqrstuvwxyz0123456789-._~/?=&%+!$'()*,;:@ "


@dataclass(frozen=True)
class Extras:
    """A urlset entry's extensions as meant: image locations, videos, hreflang
    alternates (language, href), and the Google News title and language."""

    images: tuple[str, ...] = ()
    videos: int = 0
    alternates: tuple[tuple[str, str], ...] = ()
    title: str | None = None
    language: str | None = None

    def read(self) -> Extensions | None:
        """What a reader gives of them (None when there is nothing)."""
        if not (self.images or self.videos or self.alternates or self.title or self.language):
            return None
        first = next((i.strip() for i in self.images if i.strip()), None)
        return Extensions(
            len(self.alternates),
            self.alternates[:MAX_ALTERNATES],
            len(self.images),
            first,
            self.videos,
            self.title.strip() if self.title else None,
            self.language.strip() if self.language else None,
        )


@dataclass(frozen=True)
class Entry:
    """One entry as meant: a URL, its date text (None: no element), a news date and its
    sitemap extensions."""

    loc: str
    lastmod: str | None = None
    news: str | None = None
    extras: Extras | None = None


@dataclass(frozen=True)
class Style:
    """How a file is written; none of it changes what it means."""

    prefix: str = ""  # namespace prefix for the sitemap elements ("" = default namespace)
    lastmod_first: bool = False
    padding: str = ""  # whitespace around values
    cdata: bool = False
    charrefs: bool = False  # write non-ASCII as &#NNN; references
    comments: bool = False
    extensions: bool = False  # changefreq, priority (an entry's own extras are its Extras)
    declaration: bool = True
    line_end: str = "\n"


@dataclass(frozen=True)
class Sitemap:
    """A sitemap file as meant: its kind and its entries."""

    kind: str
    entries: tuple[Entry, ...]
    style: Style = field(default_factory=Style)


# -- rendering ---------------------------------------------------------------------------------


def _value(text: str, style: Style) -> str:
    if style.cdata and "]]>" not in text:
        body = f"<![CDATA[{text}]]>"
    elif style.charrefs:
        body = "".join(c if ord(c) < 128 else f"&#{ord(c)};" for c in escape(text))
    else:
        body = escape(text)
    return f"{style.padding}{body}{style.padding}"


def _tag(style: Style, name: str) -> str:
    return f"{style.prefix}:{name}" if style.prefix else name


def _sitemap_entry(kind: str, entry: Entry, style: Style) -> str:
    t = lambda name: _tag(style, name)  # noqa: E731
    loc = f"<{t('loc')}>{_value(entry.loc, style)}</{t('loc')}>"
    parts = [loc]
    if entry.lastmod is not None:
        lastmod = f"<{t('lastmod')}>{_value(entry.lastmod, style)}</{t('lastmod')}>"
        parts.insert(0 if style.lastmod_first else 1, lastmod)
    if style.comments:
        parts.insert(1, "<!-- <loc>https://example.com/not-this</loc> -->")
    if style.extensions and kind == "urlset":
        parts += [
            f"<{t('changefreq')}>daily</{t('changefreq')}>",
            f"<{t('priority')}>0.5</{t('priority')}>",
        ]
    extras = entry.extras if kind == "urlset" else None
    if extras is not None:
        parts += _extras(extras, style)
    if kind == "urlset" and (
        entry.news is not None or (extras and (extras.title or extras.language))
    ):
        parts.append(_news(entry, style))
    record = t("url" if kind == "urlset" else "sitemap")
    return f"<{record}>{''.join(parts)}</{record}>"


def _extras(extras: Extras, style: Style) -> list[str]:
    """An entry's image, video and hreflang elements."""
    parts = [
        f"<image:image><image:loc>{_value(src, style)}</image:loc>"
        "<image:caption>c</image:caption></image:image>"
        for src in extras.images
    ]
    parts += ["<video:video><video:title>v</video:title></video:video>"] * extras.videos
    parts += [
        f'<xhtml:link rel="alternate" hreflang={quoteattr(lang)} href={quoteattr(href)}/>'
        for lang, href in extras.alternates
    ]
    return parts


def _news(entry: Entry, style: Style) -> str:
    """An entry's news:news element: its publication (name, language), date and title."""
    extras = entry.extras or Extras()
    language = (
        f"<news:language>{_value(extras.language, style)}</news:language>"
        if extras.language
        else ""
    )
    date = (
        f"<news:publication_date>{_value(entry.news, style)}</news:publication_date>"
        if entry.news is not None
        else ""
    )
    title = f"<news:title>{_value(extras.title, style)}</news:title>" if extras.title else ""
    return (
        f"<news:news><news:publication><news:name>N</news:name>{language}</news:publication>"
        f"{date}{title}</news:news>"
    )


def _root_attributes(style: Style) -> str:
    own = f"xmlns:{style.prefix}" if style.prefix else "xmlns"
    spaces = {own: SITEMAP_NS, "xmlns:news": NEWS_NS, "xmlns:image": IMAGE_NS}
    spaces["xmlns:xhtml"] = XHTML_NS
    spaces["xmlns:video"] = VIDEO_NS
    return " ".join(f"{k}={quoteattr(v)}" for k, v in spaces.items())


def _rss_item(entry: Entry, style: Style) -> str:
    date = f"<pubDate>{_value(entry.lastmod, style)}</pubDate>" if entry.lastmod is not None else ""
    return f"<item><title>t</title><link>{_value(entry.loc, style)}</link>{date}</item>"


def _atom_entry(entry: Entry, style: Style, index: int) -> str:
    updated = (
        f"<updated>{_value(entry.lastmod, style)}</updated>" if entry.lastmod is not None else ""
    )
    return (
        f"<entry><title>t</title><id>urn:uuid:{index}</id>"
        f'<link rel="alternate" href={quoteattr(entry.loc)}/>{updated}</entry>'
    )


def render(sitemap: Sitemap) -> str:
    """The file as text (no encoding declaration: :func:`encode` adds it)."""
    style, end = sitemap.style, sitemap.style.line_end
    if sitemap.kind == "text":
        return "".join(f"{style.padding}{e.loc}{style.padding}{end}" for e in sitemap.entries)
    if sitemap.kind in ("urlset", "sitemapindex"):
        root = _tag(style, sitemap.kind)
        body = end.join(_sitemap_entry(sitemap.kind, e, style) for e in sitemap.entries)
        return f"<{root} {_root_attributes(style)}>{end}{body}{end}</{root}>{end}"
    if sitemap.kind == "rss":
        items = end.join(_rss_item(e, style) for e in sitemap.entries)
        return f'<rss version="2.0"><channel><title>c</title>{end}{items}{end}</channel></rss>{end}'
    entries = end.join(_atom_entry(e, style, i) for i, e in enumerate(sitemap.entries))
    return f'<feed xmlns="{ATOM_NS}"><title>f</title>{end}{entries}{end}</feed>{end}'


def encode(sitemap: Sitemap, encoding: str = "utf-8", spelling: str | None = "UTF-8") -> bytes:
    """The file in ``encoding`` (BOM where the encoding has one), declared as ``spelling``."""
    text = render(sitemap)
    if sitemap.kind != "text" and sitemap.style.declaration and spelling is not None:
        text = f'<?xml version="1.0" encoding="{spelling}"?>{sitemap.style.line_end}{text}'
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}.get(encoding, b"")
    return bom + text.encode(encoding)


def expected(sitemap: Sitemap) -> list[Record]:
    """The records a correct reader returns for the file, in order."""
    if sitemap.kind == "text":
        return [(e.loc, None, None) for e in sitemap.entries]
    if sitemap.kind != "urlset":
        return [(e.loc, e.lastmod, None) for e in sitemap.entries]
    return [(e.loc, e.lastmod, _third(e)) for e in sitemap.entries]


def _third(entry: Entry) -> str | RecordExtras | None:
    read = entry.extras.read() if entry.extras is not None else None
    return entry.news if read is None else RecordExtras(entry.news, read)


def normal(records: list[Record]) -> list[Record]:
    """Records with an empty lastmod or third field as None (the fast path writes "" for
    an absent one; the walker reads both alike)."""
    return [(loc, lastmod or None, third or None) for loc, lastmod, third in records]


def gzip_pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` gzip'd as one member per piece between ``cuts``, the members in order."""
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    pieces = [data[a:b] for a, b in itertools.pairwise(points)] or [b""]
    return [gzip.compress(p, mtime=0) for p in pieces]


def gzip_members(data: bytes, cuts: list[int]) -> bytes:
    """``data`` as a multi-member gzip stream (what ``cat a.gz b.gz`` makes)."""
    return b"".join(gzip_pieces(data, cuts))


# -- reading -----------------------------------------------------------------------------------


@dataclass
class Read:
    kind: str | None
    records: list[Record]
    problems: list[tuple[str, str]]
    ended_mid_document: bool


def read(chunks: list[bytes]) -> Read:
    """Run the walker's reader over these chunks, as the walker does."""
    reader = SitemapReader()
    records = [r for batch in reader.batches(iter(chunks)) for r in batch]
    return Read(reader.kind, records, reader.problems, reader.ended_mid_document)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` in pieces cut at ``cuts`` (taken modulo its length), none empty."""
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


# -- strategies --------------------------------------------------------------------------------

_moments = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2040, 12, 31), timezones=st.just(UTC)
)
_offsets = st.sampled_from(["Z", "+00:00", "+02:00", "-05:30", "+14:00", "-12:00"])


@st.composite
def w3c_dates(draw: st.DrawFn) -> str:
    """A valid W3C Datetime in any of its six forms."""
    moment = draw(_moments)
    form = draw(st.sampled_from(["year", "month", "day", "minute", "second", "fraction"]))
    zone = draw(_offsets)
    if form == "year":
        return f"{moment.year:04d}"
    if form == "month":
        return moment.strftime("%Y-%m")
    if form == "day":
        return moment.strftime("%Y-%m-%d")
    pattern = {"minute": "%Y-%m-%dT%H:%M", "second": "%Y-%m-%dT%H:%M:%S"}.get(
        form, "%Y-%m-%dT%H:%M:%S.%f"
    )
    return moment.strftime(pattern) + zone


@st.composite
def rfc822_dates(draw: st.DrawFn) -> str:
    moment = draw(_moments)
    hours = draw(st.integers(-12, 14))
    return format_datetime(moment.astimezone(timezone(timedelta(hours=hours))))


#: Dates as they come: mostly valid, sometimes the garbage real files carry.
junk_dates = st.sampled_from(
    ["", "15/10/2026", "yesterday", "2026-13-01", "2026-02-30", "2026-10-01T10:00", "0000", "N/A"]
)


def dates_for(kind: str) -> st.SearchStrategy[str]:
    valid = rfc822_dates() if kind == "rss" else w3c_dates()
    return st.one_of(valid, valid, junk_dates)


def urls(origin: str = ORIGIN, extra: str = "", spaces: bool = True) -> st.SearchStrategy[str]:
    """Absolute URLs on ``origin``, their paths drawn from ASCII and ``extra`` characters."""
    alphabet = _PATH_ASCII + extra + "&<>\"'"
    if not spaces:
        alphabet = "".join(c for c in alphabet if not c.isspace())
    path = st.text(alphabet=alphabet, min_size=0, max_size=30)
    return path.map(lambda p: f"{origin}/{p.strip()}")


def styles(kind: str) -> st.SearchStrategy[Style]:
    if kind == "text":
        ends = st.sampled_from(["\n", "\r\n", "\r"])
        return st.builds(Style, padding=st.sampled_from(["", " ", "\t"]), line_end=ends)
    return st.builds(
        Style,
        prefix=st.sampled_from(["", "", "sm"] if kind in ("urlset", "sitemapindex") else [""]),
        lastmod_first=st.booleans(),
        padding=st.sampled_from(["", " ", "\n  ", "\t"]),
        cdata=st.booleans(),
        charrefs=st.booleans(),
        comments=st.booleans(),
        extensions=st.booleans(),
        declaration=st.booleans(),
        line_end=st.sampled_from(["\n", "\r\n", ""]),
    )


_LANGUAGES = st.sampled_from(["de", "fr", "en-GB", "x-default", "pt-br"])
_TITLES = st.sampled_from(["A", "Tom & Jerry", "<b>bold</b>", "x  y", " padded "])


@st.composite
def extra_elements(draw: st.DrawFn, origin: str = ORIGIN) -> Extras:
    """Sitemap extensions of one entry: images, videos, hreflang links, news fields
    (a few of each, the alternates sometimes beyond what is kept)."""
    images = tuple(draw(st.lists(urls(origin, spaces=False), max_size=3)))
    alternates = draw(st.lists(st.tuples(_LANGUAGES, urls(origin)), max_size=3))
    if draw(st.integers(0, 20)) == 0:  # now and then more than are kept
        alternates += [("de", f"{origin}/{i}") for i in range(MAX_ALTERNATES + 2)]
    return Extras(
        images,
        draw(st.integers(0, 2)),
        tuple(alternates),
        draw(st.none() | _TITLES),
        draw(st.none() | _LANGUAGES),
    )


@st.composite
def sitemaps(
    draw: st.DrawFn,
    kinds: tuple[str, ...] = KINDS,
    origin: str = ORIGIN,
    extra: str = "éü日本€",
    max_entries: int = 12,
) -> Sitemap:
    """A sitemap of one of ``kinds`` with distinct URLs on ``origin``."""
    kind = draw(st.sampled_from(kinds))
    locs = draw(
        st.lists(urls(origin, extra, spaces=kind != "text"), max_size=max_entries, unique=True)
    )
    if kind == "text" and not locs:
        locs = [origin + "/"]
    dated = dates_for(kind)
    entries = []
    for loc in locs:
        lastmod = None if kind == "text" else draw(st.none() | dated)
        news = draw(st.none() | w3c_dates()) if kind == "urlset" else None
        extras = draw(st.none() | extra_elements(origin)) if kind == "urlset" else None
        entries.append(Entry(loc, lastmod, news, extras))
    return Sitemap(kind, tuple(entries), draw(styles(kind)))


@st.composite
def encoded_sitemaps(draw: st.DrawFn, kinds: tuple[str, ...] = KINDS) -> tuple[Sitemap, bytes]:
    """A sitemap and its bytes in an encoding that can carry its URLs, correctly declared."""
    encoding = draw(st.sampled_from(sorted(ENCODINGS)))
    kind = draw(st.sampled_from(kinds))
    if kind == "text":  # a text sitemap is UTF-8 (the protocol), BOM or not
        encoding = draw(st.sampled_from(["utf-8", "utf-8-sig"]))
    sitemap = draw(sitemaps(kinds=(kind,), extra=ENCODINGS[encoding]))
    spelling = draw(st.sampled_from(SPELLINGS[encoding]))
    undeclared = spelling is None or not sitemap.style.declaration
    if undeclared and encoding not in ("utf-8", "utf-8-sig", "us-ascii", "utf-16-le", "utf-16-be"):
        sitemap = Sitemap(sitemap.kind, sitemap.entries, _declared(sitemap.style))
        spelling = SPELLINGS[encoding][0]
    return sitemap, encode(sitemap, encoding, spelling)


def _declared(style: Style) -> Style:
    return Style(**{**style.__dict__, "declaration": True})


def chunkings() -> st.SearchStrategy[list[int] | str]:
    """Where a stream is cut into chunks: whole, byte by byte, or at drawn points."""
    points = st.lists(st.integers(0, 1 << 20), max_size=12)
    return st.one_of(st.just("whole"), st.just("bytes"), points)


def chunk(data: bytes, how: list[int] | str) -> list[bytes]:
    """``data`` cut as ``how`` says (see :func:`chunkings`)."""
    if how == "whole":
        return [data] if data else []
    if how == "bytes":
        return [data[i : i + 1] for i in range(len(data))]
    assert isinstance(how, list)
    return split(data, how)
