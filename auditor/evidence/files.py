"""A page saved as a file, read like a fetched one (the evidence stage's only file I/O).

Fetching pages over HTTP is the sampler's (:mod:`auditor.sampler.fetch`).

Touches: the disk.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from auditor.evidence.model import PageEvidence
from auditor.evidence.page import PAGE_MAX_BYTES, read_page
from auditor.http import read_local_file

__all__ = ["read_page_file"]


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
