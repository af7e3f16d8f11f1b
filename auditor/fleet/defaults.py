"""A fleet's named defaults (light to import: the CLI's --help shows them).

Touches: nothing.
"""

from __future__ import annotations

import os

__all__ = ["DEFAULT_SITE_TIMEOUT", "HUNG_GRACE", "SITES_PER_CORE", "default_concurrency"]

#: Sites in flight per core by default (see :mod:`auditor.fleet.engine`).
SITES_PER_CORE = 16
#: A site's wall-clock bound by default: about five times what a large site takes at
#: the default delay (a walk of a few dozen files, 50 pages a second or more apart).
DEFAULT_SITE_TIMEOUT = 1800.0
#: Seconds past its bound after which a site whose worker says nothing is abandoned.
HUNG_GRACE = 120.0


def default_concurrency() -> int:
    """Sites in flight on this machine by default: SITES_PER_CORE per core."""
    return SITES_PER_CORE * (os.cpu_count() or 1)
