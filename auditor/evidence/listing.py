"""What a page lists: the links in its content area (touches nothing: no network, disk
or database).

A list page (a tag, a category, the home page, a paginated archive) is dated by many
generators with its newest child's date (Hugo's ``.Lastmod`` of a list, WordPress
plugins' term sitemaps). Its lastmod then moves when a child is edited, while the list
itself (titles and links) may not. To tell that from a build stamp, the audit looks its
links up in the inventory (:mod:`auditor.sampler.children`); this module only reads them.

The content area is the body without its frame: links inside ``nav``, ``aside``,
``menu``, and a ``header`` or ``footer`` outside an article are the site's menus, the
same on every page. Links are resolved against the page's URL, their fragment dropped,
duplicates removed, at most :data:`MAX_LINKS` kept (in document order).

Touches: nothing.
"""

from __future__ import annotations

from lxml import etree

from auditor.evidence.indexing import resolved

__all__ = ["MAX_LINKS", "content_links"]

#: Links kept per page: a list page shows tens to a few hundred children; a page with
#: thousands of links (a sitemap page, an archive of everything) is not judged as a list.
MAX_LINKS = 500
_CONTENT_HREFS = etree.XPath(
    "descendant-or-self::body//a[@href][not(ancestor::nav or ancestor::aside or ancestor::menu"
    " or ancestor::header[not(ancestor::article)]"
    " or ancestor::footer[not(ancestor::article)])]/@href"
)


def content_links(tree: etree._Element, page_url: str) -> tuple[str, ...]:
    """The absolute http(s) URLs the page's content area links to (module docstring),
    its own URL left out; empty when it holds more than :data:`MAX_LINKS`."""
    found = _CONTENT_HREFS(tree.getroottree().getroot())  # the whole document's
    if not isinstance(found, list):
        return ()
    own = page_url.partition("#")[0]
    links: dict[str, None] = {}
    seen: set[str] = set()  # hrefs read already: a menu repeats its links
    for href in map(str, found):
        if href in seen:
            continue  # resolved as before: kept already, or left out
        seen.add(href)
        url = resolved(href, page_url)  # an absolute http(s) URL, or None
        if url is None:
            continue
        url = url.partition("#")[0]
        if url == own:
            continue
        links[url] = None
        if len(links) > MAX_LINKS:
            return ()
    return tuple(links)
