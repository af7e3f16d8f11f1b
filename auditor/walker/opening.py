"""Opening one sitemap file: a local file, an HTTP response, or a 304 that reuses a stored one.

:func:`open_file` gives either an :class:`Opened` file, its body ready to stream with what
the response said about it, or, when there is nothing to read, the file's record as
``unreadable`` (its problem reported). With a previous walk's
:class:`~auditor.walker.reuse.SitemapStore`, a file it holds is requested conditionally;
a 304 then answers with the stored file (``Opened.reused``) to stand in for reading it.
A redirect followed is reported; a failed request, an error status (or a bot wall, as
``blocked``) and a 304 to a request that asked for no comparison leave the file unread.

Touches: the network, the disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from typing import TYPE_CHECKING

from auditor.http.body import Body, read_local_file
from auditor.http.options import FetchFailure
from auditor.models import SitemapFile
from auditor.walker.pending import Pending, Report

if TYPE_CHECKING:  # the client loads with its first request
    from auditor.http.client import HttpClient
    from auditor.walker.reuse import SitemapStore, StoredFile

__all__ = ["Opened", "open_file", "status_text", "stored_file"]

#: Each status code's reason phrase (as ``http.client.responses``, without loading the
#: HTTP client module for a local file).
_REASONS = {status.value: status.phrase for status in HTTPStatus}


@dataclass
class Opened:
    """A file ready to stream, with what its response said about it."""

    body: Body
    fetched_at: datetime
    status: int | None = None
    final_url: str | None = None
    date_header: str | None = None
    last_modified_header: str | None = None
    etag: str | None = None
    reused: StoredFile | None = None  # a 304 answered the conditional request: read this
    headers: Mapping[str, str] = field(default_factory=dict)  # the response's (walls)


def open_file(
    item: Pending,
    client: HttpClient | None,
    max_bytes: int,
    previous: SitemapStore | None,
    report: Report,
) -> Opened | SitemapFile:
    """``item`` opened (a local file read up to ``max_bytes``, else requested through
    ``client``), or its record as unreadable when it cannot be; problems go to ``report``."""
    fetched_at = datetime.now(UTC)
    if item.local_path is not None:
        try:
            body = read_local_file(item.local_path, max_bytes)
        except OSError as exc:
            return _failed(item, fetched_at, None, "http-error", f"cannot read file: {exc}", report)
        return Opened(body, fetched_at)
    assert client is not None
    stored = stored_file(previous, item.url)
    headers = stored.headers if stored is not None else None
    response = client.get(item.url, headers=headers)
    if isinstance(response, FetchFailure):
        return _failed(item, fetched_at, response.status, response.code, response.detail, report)
    if response.redirects:  # on the same origin, or the client would have refused it
        hops = len(response.redirects)
        moved = "a redirect" if hops == 1 else f"{hops} redirects"
        report(item.url, "redirect", f"followed {moved} to {response.final_url}")
    if response.status == 304 and stored is None:
        response.close()
        detail = f"{status_text(304)} to a request that asked for no comparison"
        return _failed(item, fetched_at, 304, "http-error", detail, report)
    if not response.ok and response.status != 304:
        from auditor.http.walls import body_head, wall_of  # an error page's, read alone

        status = response.status
        wall = wall_of(status, response.headers, body_head(response.body))
        response.close()
        if wall is not None:
            return _failed(item, fetched_at, status, "blocked", wall.detail(), report)
        return _failed(item, fetched_at, status, "http-error", status_text(status), report)
    opened = Opened(
        response.body,
        response.fetched_at,
        response.status,
        response.final_url,
        response.header("date"),
        response.header("last-modified"),
        response.header("etag"),
        headers=response.headers,
    )
    if response.status == 304 and stored is not None:
        for _ in response.body:  # a 304 has no body: this only frees the connection
            pass
        opened.last_modified_header = opened.last_modified_header or (
            stored.file.last_modified_header
        )
        opened.etag = opened.etag or stored.file.etag
        opened.reused = stored
    return opened


def stored_file(previous: SitemapStore | None, url: str) -> StoredFile | None:
    """What the previous walk read of ``url``, when it can be asked about conditionally."""
    if previous is None:
        return None
    stored = previous.stored(url)
    return stored if stored is not None and stored.headers else None


def status_text(status: int) -> str:
    """``HTTP 404 Not Found``: a status with its reason phrase, when it has one."""
    reason = _REASONS.get(status, "")
    return f"HTTP {status} {reason}".rstrip()


def _failed(
    item: Pending,
    fetched_at: datetime,
    status: int | None,
    code: str,
    detail: str,
    report: Report,
) -> SitemapFile:
    """Report why ``item`` could not be read; its record as unreadable."""
    report(item.url, code, detail)
    return SitemapFile(
        url=item.url,
        kind="unreadable",
        parent=item.parent,
        via_robots=item.via_robots,
        fetched_at=fetched_at,
        status=status,
        index_lastmod=item.index_lastmod,
    )
