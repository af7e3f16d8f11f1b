"""A site's robots.txt as fetched once, for the walker and the sampler alike.

The walker reads its ``Sitemap:`` lines; the sampler makes its policy of the same
response (:func:`auditor.sampler.robots.policy_of`), so an audit asks a site for its
robots.txt once. The value keeps what both need: the status (or why there was none),
the body up to Google's 500 KiB, and what went wrong reading it.

Touches: the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from auditor.http.options import FetchFailure
from auditor.http.walls import body_head, wall_of
from auditor.walker.discovery import ROBOTS_MAX_BYTES

if TYPE_CHECKING:  # the client loads with its first request
    from auditor.http.client import HttpClient

__all__ = ["RobotsFile", "fetch_robots_file", "robots_url"]


@dataclass(frozen=True)
class RobotsFile:
    """One answer to a robots.txt request (picklable).

    ``failure`` is the (code, detail) of a request that got no usable response (no
    connection, a timeout, redirects without end or off the site); otherwise ``status``
    is the final answer's, and ``body`` its bytes when it was 2xx (capped at
    :data:`ROBOTS_MAX_BYTES`; ``body_problem`` says when the body was cut or broken).
    ``wall`` names a bot wall answered instead (:mod:`auditor.http.walls`), whatever its
    status: its body is then never read as rules.
    """

    url: str
    status: int | None = None
    final_url: str | None = None
    body: bytes = b""
    failure: tuple[str, str] | None = None
    body_problem: tuple[str, str] | None = None
    wall: str | None = None

    @property
    def ok(self) -> bool:
        """True when robots.txt answered 2xx."""
        return self.failure is None and self.status is not None and 200 <= self.status < 300


def robots_url(site: str) -> str:
    """The robots.txt URL of a site origin."""
    return site.rstrip("/") + "/robots.txt"


def fetch_robots_file(client: HttpClient, site: str) -> RobotsFile:
    """GET ``site``'s robots.txt through ``client``, its body read (capped) and closed."""
    url = robots_url(site)
    response = client.get(url, max_bytes=ROBOTS_MAX_BYTES)
    if isinstance(response, FetchFailure):
        return RobotsFile(url, response.status, failure=(response.code, response.detail))
    if not response.ok:
        wall = wall_of(response.status, response.headers, body_head(response.body))
        response.close()
        detail = wall.detail() if wall else None
        return RobotsFile(url, response.status, response.final_url, wall=detail)
    raw = b"".join(response.body)  # capped at ROBOTS_MAX_BYTES, as Google reads it
    wall = wall_of(response.status, response.headers, raw)
    if wall is not None:
        return RobotsFile(url, response.status, response.final_url, wall=wall.detail())
    return RobotsFile(url, response.status, response.final_url, raw, None, response.body.problem)
