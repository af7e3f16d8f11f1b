"""One file's record once it is read: its judge of locs, its content, its counts' problems.

:func:`judge_for` says which origins a file's locs may use (its own, its final URL's
after a redirect, and what it inherits; any for a local file). When the file is read
(or replayed from a previous walk), :func:`file_problems` names what its counts show,
:func:`file_content` gathers what a later reuse needs, and :func:`file_record` makes its
:class:`~auditor.models.SitemapFile`.

Touches: nothing.
"""

from __future__ import annotations

from auditor.models import FileContent, SitemapFile
from auditor.walker.locs import LocJudge, origin_of
from auditor.walker.opening import Opened
from auditor.walker.pages import Tally
from auditor.walker.pending import Pending
from auditor.walker.tallies import tally_problems

__all__ = ["file_content", "file_problems", "file_record", "judge_for"]


def judge_for(item: Pending, final_url: str | None) -> LocJudge:
    """The judge of ``item``'s locs: its origin, its final URL's and those it inherits
    (any absolute http(s) URL for a local file)."""
    if item.local_path is not None:
        return LocJudge(None)
    origins = {origin_of(item.url), *item.extra_origins}
    if final_url:
        origins.add(origin_of(final_url))
    return LocJudge(origins)


def file_problems(
    item: Pending, kind: str | None, tally: Tally, max_urls: int
) -> list[tuple[str, str]]:
    """(code, detail) of each problem ``item``'s counts show, ``max_urls`` its limit
    (an index listed by an index is nested)."""
    index = item.parent if item.chain else None
    return tally_problems(kind, tally, max_urls=max_urls, listed_by_index=index)


def file_content(
    problems: list[tuple[str, str]], children: list[tuple[str, str | None]], tally: Tally
) -> FileContent:
    """What a later walk needs to reuse the file: its problems, its children as written
    and its counts."""
    return FileContent(
        tuple(problems),
        tuple(children),
        tally.without_loc,
        tally.duplicates,
        tuple(tally.repeated),
    )


def file_record(
    item: Pending,
    opened: Opened,
    kind: str | None,
    tally: Tally,
    content: FileContent | None = None,
) -> SitemapFile:
    """The record of a file read as ``kind`` (None: not a sitemap); ``content`` is kept
    only for a file fetched over HTTP."""
    return SitemapFile(
        url=item.url,
        kind=kind or "unreadable",
        parent=item.parent,
        via_robots=item.via_robots,
        fetched_at=opened.fetched_at,
        status=opened.status,
        final_url=opened.final_url,
        date_header=opened.date_header,
        last_modified_header=opened.last_modified_header,
        etag=opened.etag,
        index_lastmod=item.index_lastmod,
        records=tally.records,
        urls=tally.emitted,
        bytes_read=opened.body.bytes_read,
        gzipped=opened.body.gzipped,
        readable=kind is not None,
        content=content if opened.status is not None else None,  # not for a local file
    )
