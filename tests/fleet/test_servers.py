"""The fleet tests' politeness check (``too_close``) on requests made by hand: it names
a pair closer than the delay, across two ports of one host, and passes a polite one.

Touches: the network (loopback).
"""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator

import pytest

from auditor.demo.server import SiteServer
from tests.fleet.servers import simulated, too_close

DELAY = 0.3


@pytest.fixture
def shared_host() -> Iterator[list[SiteServer]]:
    """Two sites on one host name, two ports."""
    servers = [SiteServer(simulated("no-lastmod", n), host="127.0.21.1") for n in (1, 2)]
    yield servers
    for server in servers:
        server.close()


def _get(url: str) -> None:
    with urllib.request.urlopen(url, timeout=5) as answer:
        answer.read()


def test_a_pair_closer_than_the_delay_is_named(shared_host):
    first, second = shared_host
    _get(first.url("/robots.txt"))
    _get(second.url("/robots.txt"))  # at once, on the other port of the same host
    found = too_close(shared_host, DELAY)
    assert len(found) == 1 and found[0].startswith("127.0.21.1: ")
    assert "robots.txt" in found[0] and "s after" in found[0]


def test_a_polite_pair_passes(shared_host):
    first, second = shared_host
    _get(first.url("/robots.txt"))
    time.sleep(DELAY + 0.02)
    _get(second.url("/robots.txt"))
    assert too_close(shared_host, DELAY) == []
