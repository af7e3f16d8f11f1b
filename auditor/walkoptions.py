"""How a walk behaves: its limits and options, outside the walker package (importing
any of :mod:`auditor.walker` loads the whole walker) so that a command line can offer
``--max-files`` and ``auditor --help`` can start without it. :mod:`auditor.walker` and
:mod:`auditor.walker.walk` re-export every name here.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auditor.http.options import HttpOptions

__all__ = ["DEFAULT_MAX_FILES", "PROTOCOL_MAX_URLS", "WalkOptions"]

#: Files read at most in one walk: a full 1,000-file index with room to spare.
DEFAULT_MAX_FILES = 5_000
#: The protocol's limit of URLs (or child sitemaps) in one file.
PROTOCOL_MAX_URLS = 50_000


@dataclass(frozen=True)
class WalkOptions:
    """How a walk behaves; every field has a named default."""

    http: HttpOptions = field(default_factory=HttpOptions)
    max_files: int = DEFAULT_MAX_FILES
    max_urls_per_file: int = PROTOCOL_MAX_URLS
