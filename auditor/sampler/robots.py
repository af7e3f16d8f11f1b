"""robots.txt for page fetches, read as Google reads it (protego does the matching).

Google's rules: the most specific user-agent group applies, the longest matching
rule wins (``*`` and ``$`` understood), ``Allow`` wins a tie. A robots.txt that
answers 4xx means no restriction; 5xx, 429 or no answer at all means do not
crawl; one that redirects without end (a loop, or more than five hops) is
unavailable, as a 404 is (RFC 9309, 2.3.1.2). Only the first 500 KiB are read,
with the walker's decoder (a byte-order mark is skipped). (Protego implements
the matching; the fetch and the status rules are here.)
"""

from __future__ import annotations

from dataclasses import dataclass

from protego import Protego

from auditor.http import FetchFailure, HttpClient
from auditor.walker.discovery import (  # Google's 500 KiB, and one decoder for both stages
    ROBOTS_MAX_BYTES,
    decode_robots,
)

__all__ = [
    "ROBOTS_MAX_BYTES",
    "USER_AGENT_TOKEN",
    "RobotsPolicy",
    "decode_robots",
    "fetch_robots",
]

#: The product token auditor answers to in a robots.txt ``User-agent:`` line.
USER_AGENT_TOKEN = "auditor"


@dataclass(frozen=True)
class RobotsPolicy:
    """What a site's robots.txt lets auditor fetch.

    ``rule`` says how the policy was reached: ``parsed`` (the file's rules),
    ``allow-all`` (4xx, or endless redirects: no robots.txt) or ``disallow-all`` (5xx, 429, or the
    file could not be fetched), with ``detail`` naming the status or failure.
    """

    url: str
    rule: str
    detail: str
    crawl_delay: float | None = None
    parser: Protego | None = None

    def allows(self, url: str) -> bool:
        """True when auditor may fetch ``url``."""
        if self.rule == "allow-all":
            return True
        if self.rule == "disallow-all" or self.parser is None:
            return False
        return bool(self.parser.can_fetch(url, USER_AGENT_TOKEN))

    @classmethod
    def from_text(cls, url: str, text: str) -> RobotsPolicy:
        """A policy from robots.txt text (already capped)."""
        parser = Protego.parse(text)
        delay = parser.crawl_delay(USER_AGENT_TOKEN)
        return cls(url, "parsed", "robots.txt read", float(delay) if delay else None, parser)


def fetch_robots(client: HttpClient, site: str) -> RobotsPolicy:
    """Fetch ``site``'s robots.txt through ``client`` and apply Google's status rules."""
    url = site.rstrip("/") + "/robots.txt"
    response = client.get(url, max_bytes=ROBOTS_MAX_BYTES)
    if isinstance(response, FetchFailure) and response.code == "too-many-redirects":
        return RobotsPolicy(url, "allow-all", f"robots.txt unavailable: {response.detail}")
    if isinstance(response, FetchFailure):
        return RobotsPolicy(url, "disallow-all", f"robots.txt unreachable: {response.detail}")
    if response.status == 429 or response.status >= 500:
        response.close()
        return RobotsPolicy(url, "disallow-all", f"robots.txt answered HTTP {response.status}")
    if not response.ok:
        response.close()
        return RobotsPolicy(url, "allow-all", f"robots.txt answered HTTP {response.status}")
    raw = b"".join(response.body)  # capped at ROBOTS_MAX_BYTES; a cut file is read as cut
    if response.body.problem and response.body.problem[0] not in ("too-large",):
        code, detail = response.body.problem
        return RobotsPolicy(url, "disallow-all", f"robots.txt not read whole: {code}: {detail}")
    return RobotsPolicy.from_text(url, decode_robots(raw))
