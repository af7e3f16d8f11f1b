"""robots.txt for page fetches, read as Google reads it (protego does the matching).

Google's rules: the most specific user-agent group applies, the longest matching
rule wins (``*`` and ``$`` understood), ``Allow`` wins a tie. A robots.txt that
answers 4xx means no restriction; 5xx, 429 or no answer at all means do not
crawl; one that redirects without end (a loop, or more than five hops) is
unavailable, as a 404 is (RFC 9309, 2.3.1.2). Only the first 500 KiB are read,
with the walker's decoder (a byte-order mark is skipped). (Protego implements
the matching; the status rules are here.) An audit fetches robots.txt once: the
walk's response (:class:`~auditor.walker.robotsfile.RobotsFile`) is made into the
sampler's policy by :func:`policy_of`.

Touches: the network.
"""

from __future__ import annotations

from dataclasses import dataclass

from protego import Protego

from auditor.http import HttpClient
from auditor.walker.discovery import (  # Google's 500 KiB, and one decoder for both stages
    ROBOTS_MAX_BYTES,
    decode_robots,
)
from auditor.walker.robotsfile import RobotsFile, fetch_robots_file

__all__ = [
    "ROBOTS_MAX_BYTES",
    "USER_AGENT_TOKEN",
    "RobotsPolicy",
    "decode_robots",
    "fetch_robots",
    "policy_of",
]

#: The product token auditor answers to in a robots.txt ``User-agent:`` line.
USER_AGENT_TOKEN = "auditor"


@dataclass(frozen=True)
class RobotsPolicy:
    """What a site's robots.txt lets auditor fetch.

    ``rule`` says how the policy was reached: ``parsed`` (the file's rules),
    ``allow-all`` (4xx, or endless redirects: no robots.txt) or ``disallow-all`` (5xx, 429, or the
    file could not be fetched), with ``detail`` naming the status or failure; ``text`` the
    file as read (``parsed`` only), which a plan keeps for the next made without a walk.
    """

    url: str
    rule: str
    detail: str
    crawl_delay: float | None = None
    parser: Protego | None = None
    text: str = ""

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
        crawl_delay = float(delay) if delay else None
        return cls(url, "parsed", "robots.txt read", crawl_delay, parser, text)


def fetch_robots(client: HttpClient, site: str) -> RobotsPolicy:
    """Fetch ``site``'s robots.txt through ``client`` and apply Google's status rules."""
    return policy_of(fetch_robots_file(client, site))


def policy_of(robots: RobotsFile) -> RobotsPolicy:
    """The policy of a robots.txt response (the walk's, or :func:`fetch_robots`'s own)."""
    url = robots.url
    if robots.failure is not None:
        code, detail = robots.failure
        if code == "too-many-redirects":
            return RobotsPolicy(url, "allow-all", f"robots.txt unavailable: {detail}")
        return RobotsPolicy(url, "disallow-all", f"robots.txt unreachable: {detail}")
    status = robots.status or 0
    if status == 429 or status >= 500:
        return RobotsPolicy(url, "disallow-all", f"robots.txt answered HTTP {status}")
    if not robots.ok:
        return RobotsPolicy(url, "allow-all", f"robots.txt answered HTTP {status}")
    if robots.body_problem and robots.body_problem[0] != "too-large":
        code, detail = robots.body_problem  # a cut file is read as cut only when capped
        return RobotsPolicy(url, "disallow-all", f"robots.txt not read whole: {code}: {detail}")
    return RobotsPolicy.from_text(url, decode_robots(robots.body))
