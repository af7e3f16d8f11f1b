"""Fetching sampled pages politely: robots.txt, one host at a time, deadlines and caps.

A page that cannot be used is still a value: a :class:`FetchedPage` whose
``error`` names why (``robots``, ``off-site``, ``not-http``, ``not-html``,
``blocked`` (a bot wall, :mod:`auditor.http.walls`), ``http-error``, ``timeout``,
``redirect``, ``too-many-redirects``; never asked for once sampling stopped:
``overloaded``, ``time-budget``).

The site is one origin (scheme, host and port, as the walker's): a page elsewhere
is ``off-site``, never requested. robots.txt is asked about every URL of a
redirect chain before it is requested: a page that redirects into a disallowed
path is ``robots``, and the disallowed URL is never fetched.

Touches: the network.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit

from auditor.evidence import PAGE_MAX_BYTES, PageEvidence, failed_page, read_page
from auditor.evidence.page import HTML_TYPES
from auditor.http import FetchFailure, HttpClient, Response, retry_after_seconds, same_origin
from auditor.http.hosts import host_key
from auditor.http.walls import WALL_PROBE_BYTES, body_head, wall_of
from auditor.sampler.pacing import OVERLOAD_LIMIT, HostPacer
from auditor.sampler.robots import RobotsPolicy

__all__ = [
    "PAGE_MAX_BYTES",
    "STOPPED",
    "FetchedPage",
    "PageFetcher",
    "download_page",
    "evidence_of",
    "read_response",
]

_OVERLOADED = frozenset({429, 503})
#: Errors of the pages not asked for because sampling the site stopped early.
STOPPED = frozenset({"overloaded", "time-budget"})
_log = logging.getLogger(__name__)
#: The detail of a page whose redirect leads where robots.txt disallows.
_ROBOTS_REFUSAL = "redirect to disallowed URL"


@dataclass(frozen=True)
class FetchedPage:
    """One page as fetched (or why not). ``headers`` have lower-case names."""

    url: str
    fetched_at: datetime
    status: int | None = None
    final_url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    truncated: bool = False
    error: str | None = None
    detail: str | None = None
    requested: bool = True  # False when it was never asked for (robots, off-site)

    @property
    def ok(self) -> bool:
        """True when the page was fetched as HTML and can be read."""
        return self.error is None


class PageFetcher:
    """Fetches pages of one site, never two at once, within robots.txt and the delays."""

    def __init__(
        self,
        site: str,
        client: HttpClient,
        robots: RobotsPolicy,
        pacer: HostPacer,
        *,
        max_bytes: int = PAGE_MAX_BYTES,
        time_budget: float | None = None,
    ) -> None:
        self.site = site
        # politeness is per host name, every spelling of one host as one
        self.site_host = host_key(urlsplit(site).hostname or "")
        self.client = client
        self.robots = robots
        self.pacer = pacer
        self.max_bytes = max_bytes
        self.requests = 0  # HTTP requests made, retries included
        pacer.honour_crawl_delay(self.site_host, robots.crawl_delay)
        self.budget = time_budget  # seconds from now no page is asked for after
        self.deadline = None if time_budget is None else pacer.now() + time_budget

    def fetch(self, url: str) -> FetchedPage:
        """Fetch ``url`` if it may be fetched; every outcome is a FetchedPage."""
        parts = urlsplit(url)
        now = datetime.now(UTC)
        if parts.scheme not in ("http", "https"):
            return FetchedPage(url, now, error="not-http", detail=parts.scheme, requested=False)
        if not same_origin(self.site, url):
            detail = f"{parts.scheme}://{parts.netloc} is not the site's origin {self.site}"
            return FetchedPage(url, now, error="off-site", detail=detail, requested=False)
        if not self.robots.allows(url):
            return FetchedPage(url, now, error="robots", detail="disallowed", requested=False)
        return self._fetch_allowed(url)

    def _fetch_allowed(self, url: str) -> FetchedPage:
        """Ask for ``url`` in the host's turn; a 429/503 is asked again after the wait,
        until the host is given up or the time budget is spent (see pacing)."""
        host = self.site_host
        answer: FetchedPage | None = None  # the page's last 429/503, if any
        for _ in range(OVERLOAD_LIMIT):
            refusal = self._refusal(url)
            if refusal is not None:
                return answer or refusal
            self.pacer.wait_turn(host)
            self.requests += 1
            try:
                response = self.client.get(url, max_bytes=self.max_bytes, may_follow=self._veto)
                if not (isinstance(response, Response) and response.status in _OVERLOADED):
                    if isinstance(response, Response):
                        self.pacer.answered(host)
                    return read_response(url, response)
                wall = wall_of(response.status, response.headers, body_head(response.body))
                response.close()
                if wall is not None:  # a challenge at 429/503 is a wall, not a busy host
                    self.pacer.answered(host)
                    return _failed(url, response, "blocked", wall.detail())
                self.pacer.slow_down(host, retry_after_seconds(response.header("retry-after")))
                answer = _failed(url, response, "http-error", f"HTTP {response.status}")
                _log.info(
                    "HTTP %d for %s: asking again when the host is ready", response.status, url
                )
            finally:
                self.pacer.finished(host)
        assert answer is not None  # OVERLOAD_LIMIT overloads in a row stop the host
        return answer

    def _refusal(self, url: str) -> FetchedPage | None:
        """Why ``url`` is not asked for now: the host was given up, or its next turn
        comes after the run's time budget; None when it may be asked."""
        code, reason = "overloaded", self.pacer.stopped(self.site_host)
        late = self.deadline is not None and self.pacer.next_turn(self.site_host) > self.deadline
        if reason is None and late:
            code, reason = "time-budget", f"the sampling time budget ({self.budget:.0f} s) is spent"
        if reason is None:
            return None
        now = datetime.now(UTC)
        return FetchedPage(url, now, error=code, detail=f"not requested: {reason}", requested=False)

    def _veto(self, target: str) -> str | None:
        """Why a redirect to ``target`` must not be followed (robots.txt), or None."""
        return None if self.robots.allows(target) else f"{_ROBOTS_REFUSAL} {target}"


def download_page(client: HttpClient, url: str, *, max_bytes: int = PAGE_MAX_BYTES) -> FetchedPage:
    """GET one page (no robots.txt, no pacing: for a page asked for by name)."""
    return read_response(url, client.get(url, max_bytes=max_bytes))


def evidence_of(page: FetchedPage, *, rdfa: bool = False) -> PageEvidence:
    """What a fetched page says about its own changes (a failed fetch stays a failure)."""
    if not page.ok:
        detail = page.detail or page.error or "not fetched"
        return failed_page(
            page.url,
            page.error or "http-error",
            detail,
            fetched_at=page.fetched_at,
            status=page.status,
            final_url=page.final_url,
        )
    return read_page(
        page.body,
        url=page.url,
        headers=page.headers,
        status=page.status or 200,
        fetched_at=page.fetched_at,
        final_url=page.final_url,
        truncated=page.truncated,
        rdfa=rdfa,
    )


def read_response(url: str, response: Response | FetchFailure) -> FetchedPage:
    """Download a page response's body when it is HTML; anything else is a reason."""
    if isinstance(response, FetchFailure):
        at = datetime.now(UTC)
        # A hop the fetcher vetoed: robots.txt disallows it (PageFetcher._veto).
        code = "robots" if response.code == "refused" else response.code
        return FetchedPage(url, at, response.status, error=code, detail=response.detail)
    if not response.ok:
        wall = wall_of(response.status, response.headers, body_head(response.body))
        response.close()
        if wall is not None:
            return _failed(url, response, "blocked", wall.detail())
        return _failed(url, response, "http-error", f"HTTP {response.status}")
    kind = (response.header("content-type") or "").split(";")[0].strip().lower()
    if kind and kind not in HTML_TYPES:
        response.close()
        return _failed(url, response, "not-html", f"content type {kind}")
    body = b"".join(response.body)
    wall = wall_of(response.status, response.headers, body[:WALL_PROBE_BYTES])
    if wall is not None:
        return _failed(url, response, "blocked", wall.detail())
    problem = response.body.problem
    if problem and problem[0] != "too-large":
        return _failed(url, response, problem[0], problem[1])
    if not kind and not _looks_like_html(body):
        return _failed(url, response, "not-html", "no content type and no HTML markup")
    return FetchedPage(
        url,
        response.fetched_at,
        response.status,
        response.final_url,
        dict(response.headers),
        body,
        truncated=problem is not None,
    )


def _failed(url: str, response: Response, code: str, detail: str) -> FetchedPage:
    return FetchedPage(
        url,
        response.fetched_at,
        response.status,
        response.final_url,
        dict(response.headers),
        error=code,
        detail=detail,
    )


def _looks_like_html(body: bytes) -> bool:
    head = body[:2048].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<html" in head
