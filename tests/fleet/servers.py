"""Loopback fleets: simulated demo sites, each on its own 127.x.y.z address (or two
sites on one address, two ports), and sites that hang or die mid-audit."""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler

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
    closer than ``delay`` from the end of one to the start of the next."""
    servers = list(servers)
    settled(servers)
    by_host: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for server in servers:
        by_host[server.host] += [
            (r.at, r.answered, server.url(r.path)) for r in server.log if r.answered is not None
        ]
    found = []
    for host, log in by_host.items():
        log.sort()
        for (_, answered, first), (arrived, _, second) in itertools.pairwise(log):
            if arrived - answered < delay - STAMP_SLACK:
                found.append(f"{host}: {second} {arrived - answered:.3f} s after {first}")
    return found
