"""What a running ``auditor serve`` holds: the history's readers, the fleet's table, the
trust index and the reports drawn, made when the server starts and closed when it stops.

Touches: the database, the disk.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.requests import Request

    from auditor.serve.fleet import FleetTable
    from auditor.serve.readers import Readers
    from auditor.serve.reports import ReportCache
    from auditor.serve.site import SiteDetail
    from auditor.serve.trust import TrustIndex

__all__ = ["MAX_PLANS", "ChartCache", "ServeConfig", "Served", "served_of"]

#: Plans made at once, at most: a 1,000,000-URL site's takes 25 s and 740 MB
#: (tests/benchmarks/README.md); more wait their turn rather than fill the memory.
MAX_PLANS = 2


@dataclass
class ChartCache:
    """The chart of verdicts over time, kept for the history's version it was drawn from."""

    version: str | None = None
    png: bytes | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class ServeConfig:
    """How to serve: the history's location (None: ``AUDITOR_DB``, else the default, as
    every command), the reports' folder, the token (None: no token asked), and the path
    prefix a reverse proxy serves under (``root_path``)."""

    db: str | None
    reports: Path
    token: str | None = None
    root_path: str = ""


class Served:
    """The server's state: open with :meth:`start`, close with :meth:`close`."""

    def __init__(
        self, readers: Readers, fleet: FleetTable, trust: TrustIndex, reports: ReportCache
    ) -> None:
        self.readers = readers
        self.fleet = fleet
        self.trust = trust
        self.reports = reports
        self.charts = ChartCache()
        self._plans = threading.BoundedSemaphore(MAX_PLANS)

    @classmethod
    def start(cls, config: ServeConfig) -> Served:
        """Open the history read-only and build the fleet's table (seconds at 100,000 sites)."""
        from auditor.serve.fleet import FleetTable
        from auditor.serve.readers import Readers
        from auditor.serve.reports import ReportCache
        from auditor.serve.trust import TrustIndex

        readers = Readers(config.db)
        try:
            fleet = FleetTable(readers)
            return cls(readers, fleet, TrustIndex(readers), ReportCache(readers, config.reports))
        except BaseException:
            readers.close()
            raise

    def detail(self, slug: str) -> SiteDetail | None:
        """The site page's data of the site at ``slug`` (None: no such site). Its plan is
        made once a version of the history, at most :data:`MAX_PLANS` at a time."""
        from auditor.serve.site import site_detail

        with self._plans:
            return site_detail(self.readers, self.fleet, slug)

    def plan_lines(self, site: str) -> Iterator[str]:
        """The site's plan as JSON lines (``auditor plan SITE --no-walk --format jsonl``),
        made at most :data:`MAX_PLANS` at a time."""
        from auditor.serve.site import site_plan_lines

        with self._plans:
            lines = list(site_plan_lines(self.readers, site))
        return iter(lines)

    def close(self) -> None:
        """Stop drawing and keeping the table up to date, close every handle."""
        self.reports.close()
        self.fleet.close()
        self.readers.close()


def served_of(request: Request) -> Served:
    """The state of the application serving ``request`` (set when it started)."""
    served: Served = request.app.state.served
    return served
