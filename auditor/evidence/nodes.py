"""schema.org nodes from JSON-LD, microdata and RDFa, and which one speaks for this page.

A page's structured data describes many things: the site (WebSite), its
publisher (Organization), the page (WebPage), and what the page is about
(NewsArticle). Dates are taken from the node that is this page's content:

1. nodes whose ``url``/``@id``/``mainEntityOfPage`` names *another* page come last
   (after the page's own OpenGraph and meta tags too: see ``structured.py``);
2. then by kind: an article-like type, then any other content type, then the
   WebPage family; site-wide types (WebSite, Organization...) are never used,
   since their dates describe the site, not this page;
3. then a node whose URL names this page before one that names no URL;
4. then JSON-LD before microdata before RDFa, then document order.

So in a Yoast-style ``@graph`` the Article's ``dateModified`` wins over the
WebPage's, and a list page's teaser Articles (other URLs) lose to its WebPage.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

__all__ = ["Node", "flatten", "names_another_page", "page_keys", "rank", "url_key"]


def _words(text: str) -> frozenset[str]:
    """A set of names written as one string, a space between each."""
    return frozenset(text.split())


ARTICLE_TYPES = _words(
    """
    Article NewsArticle AnalysisNewsArticle AskPublicNewsArticle BackgroundNewsArticle
    OpinionNewsArticle ReportageNewsArticle ReviewNewsArticle Report ScholarlyArticle
    MedicalScholarlyArticle SocialMediaPosting BlogPosting LiveBlogPosting
    DiscussionForumPosting TechArticle APIReference AdvertiserContentArticle
    SatiricalArticle
    """
)
PAGE_TYPES = _words(
    """
    WebPage ItemPage AboutPage CheckoutPage CollectionPage ContactPage FAQPage
    MedicalWebPage ProfilePage QAPage RealEstateListing SearchResultsPage MediaGallery
    ImageGallery VideoGallery
    """
)
SITE_WIDE_TYPES = _words(
    """
    WebSite Organization NewsMediaOrganization Corporation EducationalOrganization
    GovernmentOrganization NGO OnlineBusiness OnlineStore Brand SiteNavigationElement
    WPHeader WPFooter WPSideBar WPAdBlock BreadcrumbList SearchAction ListItem
    """
)
#: Properties followed into nested nodes (besides ``@graph`` and arrays).
NESTED = ("mainEntity", "mainEntityOfPage")
_MAX_DEPTH = 8
_MAX_NODES = 2_000
_SYNTAX_ORDER = {"json-ld": 0, "microdata": 1, "rdfa": 2}
_MATCH, _UNKNOWN, _OTHER = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Node:
    """One schema.org node: its syntax, short type names, URLs it names and its properties."""

    source: str
    types: tuple[str, ...]
    urls: tuple[str, ...]
    props: Mapping[str, Any]
    order: int

    def prop(self, name: str) -> Any:
        """A property by name; sites write ``datemodified`` too, so case is ignored
        when the exact name is absent."""
        if name in self.props:
            return self.props[name]
        lower = name.lower()
        return next((v for k, v in self.props.items() if k.lower() == lower), None)

    @property
    def type_name(self) -> str | None:
        """The first type, for display."""
        return self.types[0] if self.types else None


def short_type(value: str) -> str:
    """``https://schema.org/NewsArticle`` and ``schema:NewsArticle`` as ``NewsArticle``."""
    for sep in ("#", "/", ":"):
        value = value.rsplit(sep, 1)[-1]
    return value.strip()


def flatten(items: list[Any], source: str) -> list[Node]:
    """Every node in ``items`` (JSON-LD blocks or extruct's uniform items), ``@graph``,
    arrays and ``mainEntity``/``mainEntityOfPage`` followed, bounded in depth and count."""
    nodes: list[Node] = []
    for node in _walk(items, 0):
        nodes.append(_node(node, source, len(nodes)))
        if len(nodes) >= _MAX_NODES:
            break
    return nodes


def _walk(value: Any, depth: int) -> Iterator[Mapping[str, Any]]:
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, list):
        for item in value:
            yield from _walk(item, depth + 1)
        return
    if not isinstance(value, Mapping):
        return
    if "@type" in value:
        yield value
    for key in ("@graph", *NESTED):
        if key in value:
            yield from _walk(value[key], depth + 1)


def _node(value: Mapping[str, Any], source: str, order: int) -> Node:
    raw_types = value.get("@type")
    types = raw_types if isinstance(raw_types, list) else [raw_types]
    names = tuple(short_type(t) for t in types if isinstance(t, str))
    urls = [value.get("url"), value.get("@id")]
    page = value.get("mainEntityOfPage")
    urls.append(page.get("@id") or page.get("url") if isinstance(page, Mapping) else page)
    return Node(source, names, tuple(u for u in urls if isinstance(u, str)), value, order)


def url_key(url: str, base: str | None = None) -> str | None:
    """A URL reduced to what names a page: host without ``www.``, path without trailing
    slash; scheme, query and fragment dropped. None for a non-http(s) URL."""
    try:
        parts = urlsplit(urljoin(base, url.strip()) if base else url.strip())
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.removeprefix("www.")
    return f"{host}{parts.path.rstrip('/')}"


def page_keys(urls: list[str | None]) -> frozenset[str]:
    """The keys of every URL this page goes by (asked, final, canonical, og:url)."""
    keys = (url_key(u) for u in urls if u)
    return frozenset(k for k in keys if k)


def _url_status(node: Node, keys: frozenset[str], base: str) -> int:
    named = [k for k in (url_key(u, base) for u in node.urls) if k]
    if any(k in keys for k in named):
        return _MATCH
    return _OTHER if named else _UNKNOWN


def _kind(node: Node) -> int | None:
    names = set(node.types)
    if names & ARTICLE_TYPES:
        return 0
    if names & PAGE_TYPES:
        return 2
    if not names or names <= SITE_WIDE_TYPES:
        return None
    return 1


def names_another_page(node: Node, keys: frozenset[str], base: str) -> bool:
    """True when the node's URLs name a page other than this one (a teaser, a related item)."""
    return _url_status(node, keys, base) == _OTHER


def rank(nodes: list[Node], keys: frozenset[str], base: str) -> list[Node]:
    """The nodes that may speak for this page, best first (module docstring)."""
    scored = []
    for node in nodes:
        kind = _kind(node)
        if kind is None:
            continue
        status = _url_status(node, keys, base)
        syntax = _SYNTAX_ORDER.get(node.source, 3)
        scored.append(((status == _OTHER, kind, status, syntax, node.order), node))
    scored.sort(key=lambda pair: pair[0])
    return [node for _, node in scored]
