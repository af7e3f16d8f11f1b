"""Where a walk starts: the files a target names, robots.txt's ``Sitemap:`` lines first.

A local file or a sitemap URL is the one file to read. A site origin starts from the
sitemaps its robots.txt declares (their pages may also use the site's own origin);
when it declares none, or cannot be read, from ``/sitemap.xml``. What went wrong with
robots.txt is reported as a problem: a bot wall as ``blocked``, a failed request by its
code, a 5xx or 429 as ``http-error`` (a 4xx only means no robots.txt), and a broken
body by its code (its lines that arrived are still used; a body cut at Google's cap is
not a problem).

Touches: the network.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from auditor.walker.discovery import Target, decode_robots, sitemaps_from_robots
from auditor.walker.locs import origin_of
from auditor.walker.opening import status_text
from auditor.walker.pending import Pending, Report

if TYPE_CHECKING:  # the client loads with its first request
    from auditor.http.client import HttpClient
    from auditor.walker.robotsfile import RobotsFile

__all__ = ["one_file", "robots_sitemaps", "site_files"]


def one_file(target: Target) -> Pending:
    """The file a target of kind ``file`` (a local path) or ``url`` (a sitemap) names."""
    if target.kind == "file":
        path = Path(target.value)
        return Pending(url=str(path), local_path=path)
    return Pending(url=target.value)


def robots_sitemaps(client: HttpClient, site: str, report: Report) -> tuple[RobotsFile, list[str]]:
    """``site``'s robots.txt as fetched, and the sitemap URLs it declares (none when it
    could not be read); what went wrong is given to ``report``."""
    from auditor.walker.robotsfile import fetch_robots_file  # a site's walk alone reads it

    robots = fetch_robots_file(client, site)
    url = robots.url
    if robots.wall is not None:
        report(url, "blocked", f"robots.txt: {robots.wall}")
        return robots, []
    if robots.failure is not None:
        code, detail = robots.failure
        report(url, code, f"robots.txt: {detail}")
        return robots, []
    if not robots.ok:
        status = robots.status or 0
        if status >= 500 or status == 429:
            report(url, "http-error", f"robots.txt: {status_text(status)}")
        return robots, []
    if robots.body_problem and robots.body_problem[0] != "too-large":
        code, detail = robots.body_problem  # the lines that arrived are still used
        report(url, code, f"robots.txt: {detail}")
    return robots, sitemaps_from_robots(decode_robots(robots.body), site)


def site_files(site: str, declared: list[str]) -> list[Pending]:
    """The first files of a site origin's walk: the ``declared`` sitemaps (their pages
    may use the site's origin too), else ``/sitemap.xml``."""
    if not declared:
        return [Pending(url=site + "/sitemap.xml")]
    site_origin = origin_of(site)
    return [Pending(url=u, via_robots=True, extra_origins=(site_origin,)) for u in declared]
