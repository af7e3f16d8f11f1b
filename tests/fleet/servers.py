"""Loopback fleets: simulated demo sites, each on its own 127.x.y.z address (or two
sites on one address, two ports), and sites that hang or die mid-audit."""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler

from auditor.demo.loopback import LoggedRequest
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite


def simulated(behaviour: str, seed: int, pages: int = 20) -> SimulatedSite:
    """A small simulated site of one behaviour."""
    return SimulatedSite(behaviour, {"pages": BEHAVIOURS[behaviour]}, pages, seed=seed)


class HangingServer(SiteServer):
    """Answers robots.txt and the sitemap (index), then holds every other request (the
    sub-sitemaps, the pages) without a word until released."""

    def __init__(self, site: SimulatedSite, *, host: str, release: threading.Event) -> None:
        self.release = release
        super().__init__(site, host=host)

    def respond(self, path: str) -> tuple[int, str, str]:
        if path not in ("/robots.txt", "/sitemap.xml"):
            self.release.wait()
        return super().respond(path)


class DyingServer(SiteServer):
    """Serves ``answers`` requests, then dies: open connections are dropped without an
    answer and new ones refused."""

    def __init__(self, site: SimulatedSite, *, host: str, answers: int) -> None:
        self.answers = answers
        self.died = threading.Event()
        super().__init__(site, host=host)

    def respond(self, path: str) -> tuple[int, str, str]:
        if len(self.requests) > self.answers:
            if not self.died.is_set():
                self.died.set()
                threading.Thread(target=self.close, daemon=True).start()
            raise ConnectionAbortedError("the server died")
        return super().respond(path)


class SlowServer(SiteServer):
    """Takes ``pause`` seconds over each page (robots.txt and sitemaps at once), and
    says which client ports it is answering meanwhile: a worker with a port in ``busy``
    holds the host's turn."""

    def __init__(self, site: SimulatedSite, *, host: str, pause: float) -> None:
        self.pause = pause
        self.busy: set[int] = set()
        super().__init__(site, host=host)

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path == "/robots.txt" or handler.path.startswith("/sitemap"):
            super().answer(handler)
            return
        port = handler.client_address[1]
        self.busy.add(port)
        try:
            time.sleep(self.pause)
            super().answer(handler)
        finally:
            self.busy.discard(port)


def settled(servers: Iterable[SiteServer], timeout: float = 5.0) -> None:
    """Wait until the server is done with every request it received (a handler is done
    once its answer is written, a moment after the client may have read it)."""
    servers = list(servers)
    ends = time.monotonic() + timeout
    while time.monotonic() < ends and any(r.answered is None for s in servers for r in s.log):
        time.sleep(0.01)


#: The server stamps ``answered`` once its write returns, which under load can come a few
#: milliseconds after the client already holds the response and started its delay.
STAMP_SLACK = 0.005


def too_close(servers: Iterable[SiteServer], delay: float) -> list[str]:
    """Every pair of requests to one host name (all its ports) that overlapped or came
    closer than ``delay`` from the end of one to the start of the next.

    A request's end is when the server began its last write (``writing``): the client
    cannot have had the whole answer before, so a pair closer than the delay from it
    broke the rule. The server's ``answered`` stamp (when its write returned) is used,
    less :data:`STAMP_SLACK`, only for a request answered without ``send``: under the
    full suite's load it was seen 6 ms late, which made a polite pair look 0.194 s apart
    at a 0.2 s delay."""
    servers = list(servers)
    settled(servers)
    by_host: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for server in servers:
        by_host[server.host] += [
            (r.at, _ended(r), server.url(r.path)) for r in server.log if r.answered is not None
        ]
    found = []
    for host, log in by_host.items():
        log.sort()
        for (_, ended, first), (arrived, _, second) in itertools.pairwise(log):
            if arrived - ended < delay:
                found.append(f"{host}: {second} {arrived - ended:.3f} s after {first}")
    return found


def _ended(request: LoggedRequest) -> float:
    """The earliest the client can have had ``request``'s whole answer: a next request
    closer than the delay from it surely broke the rule (for a small answer, as every
    answer of these servers is, it is within microseconds of when the client had it)."""
    assert request.answered is not None
    if request.writing is not None:
        return min(request.writing, request.answered)
    return request.answered - STAMP_SLACK
