"""Google's rules for a sitemap index, each a named problem worded as Search Console words it.

Google reads a sitemap index by rules the protocol leaves implicit
(https://developers.google.com/search/docs/crawling-indexing/sitemaps/large-sitemaps):
"Sitemaps that are referenced in the sitemap index file must be in the same directory as
the sitemap index file, or lower in the site hierarchy. For example, if the sitemap index
file is at https://example.com/public/sitemap_index.xml, it can only contain sitemaps
that are in the same or deeper directory, like https://example.com/public/shared/...";
the referenced sitemaps "must be hosted on the same site"; an index lists ``sitemap``
entries (at most 50,000), not ``url`` entries nor their ``changefreq``/``priority``.
Search Console reports a child above or beside the index's directory as "URL not
allowed" and one on the www twin of the site's host as "Path mismatch: Includes www" or
"Missing www". The walker still follows what it may (these are reports, not refusals);
a child on another host or scheme stays ``cross-host`` and is not read.

The codes (each detail starts with Search Console's own words):

- ``url-not-allowed``: a child outside the index's directory;
- ``path-mismatch``: a child on the http or www twin of the index's host;
- ``url-in-index``: ``url`` entries inside an index;
- ``changefreq-in-index``: ``changefreq`` or ``priority`` inside an index;
- ``too-many-sitemaps``: an index over 50,000 entries (:mod:`~auditor.walker.tallies`);
- ``duplicate-sitemap``: an index that lists a child twice (read once).

Touches: nothing.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from auditor.walker.locs import Origin, origin_of

__all__ = ["INDEX_RULE_CODES", "ChildRules", "stranger_problems"]

#: The problem codes of Google's index rules (``nested-index`` is older: an index in an index).
INDEX_RULE_CODES = (
    "url-not-allowed",
    "path-mismatch",
    "url-in-index",
    "changefreq-in-index",
    "too-many-sitemaps",
    "duplicate-sitemap",
)


def stranger_problems(strangers: dict[str, int]) -> list[tuple[str, str]]:
    """(code, detail) of the elements an index held that an index must not hold, from
    the reader's counts by local name (``url``, ``changefreq``, ``priority``)."""
    found = []
    urls = strangers.get("url", 0)
    if urls:
        found.append(
            (
                "url-in-index",
                f"Incorrect sitemap index format: {urls:,} <url> entr"
                f"{'y' if urls == 1 else 'ies'} in a sitemap index, which lists <sitemap> "
                "entries only (not used)",
            )
        )
    hints = [f"{strangers[n]:,} <{n}>" for n in ("changefreq", "priority") if strangers.get(n)]
    if hints:
        found.append(
            (
                "changefreq-in-index",
                f"Invalid XML tag: {' and '.join(hints)} in a sitemap index (tags of a "
                "urlset's entries, not of an index's)",
            )
        )
    return found


def _twin(index: Origin, child: Origin) -> str | None:
    """How ``child`` is a twin of ``index`` (Search Console's wording), or None."""
    if index == child:
        return None
    (scheme, host, _), (child_scheme, child_host, _) = index, child
    bare, child_bare = host.removeprefix("www."), child_host.removeprefix("www.")
    if not bare or bare != child_bare:
        return None
    if child_scheme != scheme and {scheme, child_scheme} == {"http", "https"}:
        return f"{child_scheme} instead of {scheme}"
    if child_host == "www." + host:
        return "Includes www"
    if host == "www." + child_host:
        return "Missing www"
    return None


class ChildRules:
    """Google's rules over one index's children, seen one by one (:meth:`see`); the
    problems once all are seen (:meth:`problems`)."""

    def __init__(self, index_url: str) -> None:
        self.index_url = index_url
        self._origin = origin_of(index_url)
        path = urlsplit(index_url).path or "/"
        self._directory = path[: path.rfind("/") + 1] or "/"
        self._seen: set[str] = set()
        self.outside = self.twins = self.repeated = 0
        self._first_outside = self._first_twin = self._first_repeat = ""
        self._twin_kind = ""

    def see(self, loc: str) -> None:
        """One child as the index lists it (absolute or not)."""
        if loc in self._seen:
            self.repeated += 1
            self._first_repeat = self._first_repeat or loc
            return
        self._seen.add(loc)
        if not loc.lower().startswith(("http://", "https://")):
            return  # relative: reported as such
        child = origin_of(loc)
        if child == self._origin:
            if not (urlsplit(loc).path or "/").startswith(self._directory):
                self.outside += 1
                self._first_outside = self._first_outside or loc
            return
        kind = _twin(self._origin, child)
        if kind is not None:
            self.twins += 1
            if not self._first_twin:
                self._first_twin, self._twin_kind = loc, kind

    def problems(self) -> list[tuple[str, str]]:
        """(code, detail) of every rule the children broke."""
        found = []
        if self.outside:
            found.append(
                (
                    "url-not-allowed",
                    f"URL not allowed: {self.outside:,} sitemap(s) outside the index's "
                    f"directory {self._directory} (Google reads only those in it or below), "
                    f"e.g. {self._first_outside}",
                )
            )
        if self.twins:
            scheme, host, _ = self._origin
            found.append(
                (
                    "path-mismatch",
                    f"Path mismatch: {self._twin_kind}: {self.twins:,} sitemap(s) on a twin "
                    f"of {scheme}://{host}, e.g. {self._first_twin} (after a move?); "
                    "not read (cross-host)",
                )
            )
        if self.repeated:
            found.append(
                (
                    "duplicate-sitemap",
                    f"Sitemap listed twice: {self.repeated:,} entr"
                    f"{'y repeats' if self.repeated == 1 else 'ies repeat'} a sitemap the index "
                    f"already lists, e.g. {self._first_repeat} (read once)",
                )
            )
        return found
