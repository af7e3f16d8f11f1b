"""A sitemap file waiting to be read, and how the walk's parts report a problem.

:class:`Pending` is one entry of the walk's queue: where the file is, who listed it and
what it inherits from them (the chain of indexes that led to it, the origins its pages
may use). :data:`Report` is the walk's ``(sitemap, code, detail)`` problem callback, the
one way a part of the walk (:mod:`~auditor.walker.start`,
:mod:`~auditor.walker.opening`) hands it a problem.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from auditor.walker.locs import Origin

__all__ = ["Pending", "Report"]

#: Reports one problem: (the sitemap it is about, its code, its detail).
Report = Callable[[str, str, str], None]


@dataclass(frozen=True)
class Pending:
    """A sitemap file waiting to be read."""

    url: str
    parent: str | None = None
    via_robots: bool = False
    index_lastmod: datetime | None = None
    chain: tuple[str, ...] = ()  # the indexes that led here, root first
    extra_origins: tuple[Origin, ...] = ()  # origins its pages may use besides its own
    local_path: Path | None = None
