"""Whether a walk reached its target at all: a target that never answered (a refused
connection, a name not resolved, no TLS, no response in time, on robots.txt and on every
sitemap) is not a site without sitemaps, and is not audited as one.

A target *reached* gave at least one HTTP response, whatever its status: a 404 for
``/sitemap.xml`` is a finding about the site (it has no sitemap there), a refused
connection is not a finding about anything.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from auditor.http.causes import CONNECTION_FAILED
from auditor.models import Problem, SitemapFile
from auditor.walker.robotsfile import RobotsFile

__all__ = ["unreached"]

# The problem codes of a request that got no response at all (:class:`FetchFailure`).
_NO_RESPONSE = ("http-error", "timeout")


def unreached(
    robots: RobotsFile | None, files: Sequence[SitemapFile], problems: Sequence[Problem]
) -> str | None:
    """Why a walk of a URL target reached nothing, in plain words; None when something
    answered (or a sitemap was read). Not for a local file's walk."""
    if any(f.readable or f.status is not None for f in files):
        return None
    if robots is not None:
        if robots.status is not None or robots.failure is None:
            return None
        return _plain(robots.failure[1])
    failed = [p for p in problems if p.code in _NO_RESPONSE]
    if not files or not failed:
        return None
    return _plain(failed[0].detail)


def _plain(detail: str) -> str:
    """A failed request's detail without its prefixes (``robots.txt: connection failed:
    connection refused`` is ``connection refused``)."""
    detail = detail.removeprefix("robots.txt: ")
    return detail.removeprefix(CONNECTION_FAILED)
