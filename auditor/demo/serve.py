"""The demo's sites kept up for practice: served on 127.0.0.1 in real time, changed on demand.

:class:`PracticeSites` starts every demo site (:func:`auditor.demo.demo_sites`) on a
loopback port of its own, serving on the real clock (a user's audits run on it too),
and :meth:`PracticeSites.change` lets time pass on every site: some pages change, some
lastmods are bumped, as each site's behaviour says. A site's own clock (when its pages
last changed) starts :data:`LEAD` behind real time, and each change moves it half-way to
:data:`SETTLED` ago, the changes landing in between: however fast changes follow one
another, each page's changes follow one another in time, and none lands near the moment
a page is fetched (which auditor would read as a date written at render time).
``auditor demo --serve`` runs it.

Touches: the network.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Self

from auditor.demo import demo_sites
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite

__all__ = ["LEAD", "SETTLED", "Change", "PracticeSite", "PracticeSites"]

#: How far behind real time a practice site's clock starts: its first change spreads over
#: about half a day, so the changed pages' dates are all different, as a real site's are.
LEAD = timedelta(days=1)
#: How long before a change every moment it lands on is: a dateModified within 10 s of its
#: fetch reads as written at render time (``auditor.evidence.RENDER_TIME_WINDOW``); a
#: minute keeps well clear of it, even for an audit started in the same second.
SETTLED = timedelta(minutes=1)
ZERO = timedelta(0)


@dataclass(frozen=True)
class PracticeSite:
    """One site served: its behaviour's name, its origin, what auditor should conclude."""

    name: str
    origin: str
    expected: str


@dataclass(frozen=True)
class Change:
    """What one :meth:`PracticeSites.change` did: pages whose content changed, on how many
    sites."""

    pages: int
    sites: int


class PracticeSites:
    """Every demo site served on loopback until :meth:`close` (or the ``with`` ends)."""

    def __init__(self) -> None:
        self._servers = ExitStack()
        #: The simulated sites by behaviour name (what each one's pages are and say).
        self.sites = demo_sites(_now() - LEAD)
        try:
            self.served = [self._serve(name, site) for name, site in self.sites.items()]
        except BaseException:
            self._servers.close()
            raise

    def _serve(self, name: str, site: SimulatedSite) -> PracticeSite:
        server = self._servers.enter_context(SiteServer(site, _now))
        expected = BEHAVIOURS[name].says if name in BEHAVIOURS else "partial"
        return PracticeSite(name, server.origin, expected)

    def change(self) -> Change:
        """Let time pass on every site, half-way from its clock to :data:`SETTLED` ago:
        some pages change within that time (never in the future, never just now)."""
        latest = _now() - SETTLED
        changed = [site.tick(max(latest - site.clock, ZERO) / 2) for site in self.sites.values()]
        return Change(sum(map(len, changed)), sum(1 for paths in changed if paths))

    def close(self) -> None:
        """Stop serving every site (their ports are closed when this returns)."""
        self._servers.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _now() -> datetime:
    """The real time, to the second (a site's clock and its served dates)."""
    return datetime.now(UTC).replace(microsecond=0)
