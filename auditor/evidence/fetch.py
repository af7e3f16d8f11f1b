"""One page fetched through :class:`auditor.http.HttpClient` (or read from a file), then read.

The only part of the evidence package that does I/O; the sampler decides which
pages to fetch and when (robots.txt, politeness) and calls :func:`fetch_page`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from auditor.evidence.model import PageEvidence
from auditor.evidence.page import HTML_TYPES, failed_page, read_page
from auditor.http import FetchFailure, HttpClient, Response, read_local_file

__all__ = ["PAGE_MAX_BYTES", "fetch_page", "read_page_file"]

#: Bytes read of one page at most; a page over the cap is read up to it and marked truncated.
PAGE_MAX_BYTES = 10 * 1024 * 1024


def fetch_page(
    client: HttpClient, url: str, *, max_bytes: int = PAGE_MAX_BYTES, rdfa: bool = False
) -> PageEvidence:
    """GET ``url`` (deadline, same-host redirects and retries are the client's) and read it.

    A failure is a value: ``error`` is the client's code (``timeout``, ``http-error``,
    ``redirect``...) or ``not-html``; the body of an error status or of a non-HTML type
    is not downloaded.
    """
    result = client.get(url, max_bytes=max_bytes)
    if isinstance(result, FetchFailure):
        now = datetime.now(UTC)
        return failed_page(url, result.code, result.detail, fetched_at=now, status=result.status)
    if not result.ok or not _may_be_html(result):
        result.close()
        return _read(result, b"", truncated=False, rdfa=False)
    body = b"".join(result.body)
    problem = result.body.problem
    if problem is not None and problem[0] != "too-large":
        code, detail = problem
        return failed_page(url, code, detail, fetched_at=result.fetched_at, status=result.status)
    return _read(result, body, truncated=problem is not None, rdfa=rdfa)


def read_page_file(
    path: Path, *, max_bytes: int = PAGE_MAX_BYTES, rdfa: bool = False
) -> PageEvidence:
    """A page saved as a file (gzip'd or not). Its modification time stands for the fetch
    time: a saved page's render-time dateModified sits next to the moment it was saved."""
    body = read_local_file(path, max_bytes)
    data = b"".join(body)
    fetched_at = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    truncated = body.problem is not None and body.problem[0] == "too-large"
    return read_page(
        data,
        url=path.resolve().as_uri(),
        headers={},
        status=200,
        fetched_at=fetched_at,
        truncated=truncated,
        rdfa=rdfa,
    )


def _may_be_html(response: Response) -> bool:
    media = (response.header("content-type") or "").split(";", 1)[0].strip().lower()
    return not media or media in HTML_TYPES


def _read(response: Response, body: bytes, *, truncated: bool, rdfa: bool) -> PageEvidence:
    return read_page(
        body,
        url=response.url,
        final_url=response.final_url,
        headers=response.headers,
        status=response.status,
        fetched_at=response.fetched_at,
        truncated=truncated,
        rdfa=rdfa,
    )
