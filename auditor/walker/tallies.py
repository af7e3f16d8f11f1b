"""The problems one file's counts show: what :class:`~auditor.walker.pages.Tally` gathered.

Touches: nothing.
"""

from __future__ import annotations

from auditor.walker.pages import Tally

__all__ = ["tally_problems"]


def tally_problems(
    kind: str | None, tally: Tally, *, max_urls: int, listed_by_index: str | None = None
) -> list[tuple[str, str]]:
    """(code, detail) of each problem a file's counts show: ``listed_by_index`` names the
    index that listed an index (nested), ``max_urls`` is the per-file limit."""
    found: list[tuple[str, str]] = []
    if kind == "sitemapindex" and listed_by_index is not None:
        found.append(("nested-index", f"an index listed by the index {listed_by_index}"))
    if tally.records > max_urls and kind == "sitemapindex":
        found.append(
            (
                "too-many-sitemaps",
                f"Too many sitemaps in sitemap index: {tally.records:,} sitemaps, over the "
                f"protocol's {max_urls:,} (all were listed)",
            )
        )
    elif tally.records > max_urls:
        found.append(
            (
                "too-many-urls",
                f"{tally.records:,} URLs, over the protocol's {max_urls:,} (all were read)",
            )
        )
    if tally.without_loc and kind in ("urlset", "sitemapindex"):  # a feed need not link
        found.append(
            (
                "not-well-formed",
                f"{tally.without_loc:,} entries without a URL (no <loc>, <link> or <id>): not used",
            )
        )
    if tally.duplicates:
        found.append(
            (
                "duplicate-url",
                f"{tally.duplicates:,} URL(s) already listed, e.g. {tally.first_duplicate!r}",
            )
        )
    if tally.invalid:
        found.append(
            (
                "invalid-lastmod",
                f"{tally.invalid:,} lastmod value(s) are not W3C Datetime, "
                f"e.g. {tally.first_invalid!r}",
            )
        )
    return found
