"""robots.txt in the plan: a URL the site's robots.txt disallows for auditor is never
planned, and the budget it would have taken goes to the other pages.

The policy is the sampler's (:mod:`auditor.sampler.robots`: protego's matching for the
``auditor`` token, Google's rules): a robots.txt answering 4xx (or redirecting without
end) allows everything; one answering 5xx or 429, or not reachable, disallows everything
(RFC 9309, 2.3.1); a crawler that obeys robots.txt would drop those fetches, never record
them, and they would take the budget again each day. A plan with a walk reads the walk's
robots.txt (or asks for it, when the walk started from a sitemap URL) and keeps it in the
history (:mod:`auditor.history.robots`); a plan on the stored walk reads what was kept
by the site's latest audit or plan walk. A history from before auditor kept robots.txt
holds none for a site until then: its plan on the stored walk is not checked, and says
so (:meth:`Disallowed.sentence`).

Touches: the network, the database.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from auditor.history.robots import StoredRobots
from auditor.sampler.robots import RobotsPolicy, fetch_robots, policy_of
from auditor.walker.robotsfile import RobotsFile, robots_url

if TYPE_CHECKING:
    import pandas as pd

    from auditor.history import History
    from auditor.walker import WalkOptions

__all__ = [
    "Disallowed",
    "allowed_rows",
    "kept_policy",
    "leave_out",
    "policy_kept",
    "stored_robots",
    "walk_policy",
]

#: The rule of a site whose robots.txt no walk or audit kept: nothing is left out.
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Disallowed:
    """What robots.txt kept out of one site's plan: ``urls`` listed URLs it disallows for
    auditor, by the policy's ``rule`` (``parsed``, ``allow-all``, ``disallow-all``, or
    :data:`UNKNOWN`) and its ``detail``."""

    site: str
    urls: int
    rule: str
    detail: str

    def sentence(self) -> str:
        """What the plan's summary says of it, in plain English ('' when nothing)."""
        if self.rule == UNKNOWN:
            return f"robots.txt not checked ({self.detail})"
        if not self.urls:
            return ""
        said = f"{self.urls:,} {'URL' if self.urls == 1 else 'URLs'} disallowed by robots.txt"
        if self.rule == "disallow-all":
            return f"{said}, not planned ({self.detail}, read as disallowing every URL)"
        return f"{said}, not planned"


def walk_policy(robots: RobotsFile | None, site: str, options: WalkOptions | None) -> RobotsPolicy:
    """The policy of the walk's robots.txt response when it is ``site``'s own; else
    robots.txt asked for (one request: the walk started from a sitemap URL)."""
    if robots is not None and robots.url == robots_url(site):
        return policy_of(robots)
    from auditor.http import HttpClient, HttpOptions

    with HttpClient(options.http if options else HttpOptions()) as client:
        return fetch_robots(client, site)


def kept_policy(history: History, site: str) -> RobotsPolicy | None:
    """The policy of the robots.txt the history keeps for ``site``, or None."""
    return policy_kept(history.stored_robots(site))


def policy_kept(kept: StoredRobots | None) -> RobotsPolicy | None:
    """The policy of a robots.txt as the history keeps it (None: none kept)."""
    if kept is None:
        return None
    if kept.rule == "parsed":
        return RobotsPolicy.from_text(kept.url, kept.text)
    return RobotsPolicy(kept.url, kept.rule, kept.detail)


def stored_robots(policy: RobotsPolicy, read_at: datetime) -> StoredRobots:
    """What the history keeps of ``policy``, read at ``read_at``."""
    return StoredRobots(policy.url, policy.rule, policy.detail, policy.text, read_at)


def leave_out(
    site: str, entries: pd.DataFrame, policy: RobotsPolicy | None
) -> tuple[pd.DataFrame, Disallowed]:
    """``entries`` without the URLs ``policy`` disallows, and what was left out (nothing
    when no policy is known)."""
    allowed, disallowed = allowed_rows(site, entries["loc"], policy)
    if allowed is not None:
        entries = entries[allowed].reset_index(drop=True)
    return entries, disallowed


def allowed_rows(
    site: str, locs: Collection[str], policy: RobotsPolicy | None
) -> tuple[list[bool] | None, Disallowed]:
    """Which of ``locs`` ``policy`` allows (None: all of them), and what it left out
    (nothing when no policy is known)."""
    if policy is None:
        detail = "none kept for the stored walk: audit the site or plan with a walk once"
        return None, Disallowed(site, 0, UNKNOWN, detail)
    if policy.rule == "allow-all" or not len(locs):
        return None, Disallowed(site, 0, policy.rule, policy.detail)
    allowed = [policy.allows(str(loc)) for loc in locs]
    left = len(allowed) - sum(allowed)
    # most sites' sitemaps list nothing their robots.txt forbids: no copy
    return (allowed if left else None), Disallowed(site, left, policy.rule, policy.detail)
