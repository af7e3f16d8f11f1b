"""auditor's Scrapy settings, all prefixed ``AUDITOR_``, read once per crawler.

=========================  =======================================================
``AUDITOR_ENABLED``        True; False turns every auditor component off (Scrapy
                           then crawls exactly as without them)
``AUDITOR_DB``             the history (a SQLite path, ``sqlite:///...`` or
                           ``postgresql://...``); default ``AUDITOR_DB`` in the
                           environment, else auditor's default history
``AUDITOR_SITES``          the site origins to plan; default the audited sites
                           among the spider's ``sitemap_urls``, ``start_urls``
                           and ``allowed_domains``
``AUDITOR_BUDGET``         fetches a day per host name at most (default: the
                           plan's, half of what its politeness delay allows)
``AUDITOR_HORIZON``        days ahead the plan lists (default 1)
``AUDITOR_WALK``           True: the plan walks the sitemaps first, conditionally
                           (new lastmods seen); False: plans on the stored walks
``AUDITOR_FILTER``         True: requests for listed URLs that are not due are
                           dropped; False: requests are only annotated
``AUDITOR_RECORD``         True: every page response is recorded in the crawl log
``AUDITOR_RECORD_BATCH``   fetches recorded per transaction (default 200)
``AUDITOR_MAX_BODY``       bytes of a body kept as evidence (default 10 MiB)
``AUDITOR_SPOOL_DIR``      the folder of the spools: the fetches the history could
                           not take, fed to it by the next crawl (default
                           ``auditor-spool`` in Scrapy's data folder, ``.scrapy``
                           of the project or of the working directory; a relative
                           path is read from there too, as ``HTTPCACHE_DIR`` is)
``AUDITOR_CLOCK``          a callable (or its import path) giving the aware time of
                           plans and fetches; default the real clock (set for
                           replays and simulations)
``AUDITOR_CONTACT``        a URL or address in the User-Agent of the plan's walk
``AUDITOR_TIMEOUT``        seconds for each sitemap request of the plan's walk
=========================  =======================================================

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from auditor.crawl.logfile import DEFAULT_MAX_BODY

__all__ = ["SPOOL_DIR", "AuditorSettings"]

#: The spools' folder, in Scrapy's data folder (where its HTTP cache goes): a history out
#: of reach may be a file whose folder is out of reach, so not next to it.
SPOOL_DIR = "auditor-spool"


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class AuditorSettings:
    """The ``AUDITOR_`` settings of one crawler (module docstring)."""

    enabled: bool = True
    db: str | None = None
    sites: tuple[str, ...] = ()
    budget: int | None = None
    horizon_days: float = 1.0
    walk: bool = True
    filter: bool = True
    record: bool = True
    record_batch: int = 200
    max_body: int = DEFAULT_MAX_BODY
    spool_dir: str = SPOOL_DIR
    clock: Callable[[], datetime] = _now
    contact: str | None = None
    timeout: float | None = None

    @classmethod
    def of(cls, settings: BaseSettings) -> AuditorSettings:
        """Read ``settings``; a value of the wrong kind raises ValueError."""
        budget = settings.get("AUDITOR_BUDGET")
        timeout = settings.get("AUDITOR_TIMEOUT")
        found = cls(
            enabled=settings.getbool("AUDITOR_ENABLED", True),
            db=settings.get("AUDITOR_DB") or None,
            sites=tuple(str(s).rstrip("/") for s in settings.getlist("AUDITOR_SITES")),
            budget=None if budget in (None, "") else int(budget),
            horizon_days=settings.getfloat("AUDITOR_HORIZON", 1.0),
            walk=settings.getbool("AUDITOR_WALK", True),
            filter=settings.getbool("AUDITOR_FILTER", True),
            record=settings.getbool("AUDITOR_RECORD", True),
            record_batch=settings.getint("AUDITOR_RECORD_BATCH", 200),
            max_body=settings.getint("AUDITOR_MAX_BODY", DEFAULT_MAX_BODY),
            spool_dir=str(settings.get("AUDITOR_SPOOL_DIR") or SPOOL_DIR),
            clock=_clock(settings.get("AUDITOR_CLOCK")),
            contact=settings.get("AUDITOR_CONTACT") or None,
            timeout=None if timeout in (None, "") else float(timeout),
        )
        found._check()
        return found

    def _check(self) -> None:
        if self.budget is not None and self.budget < 1:
            raise ValueError(f"AUDITOR_BUDGET must be at least 1, not {self.budget}")
        if self.horizon_days <= 0:
            raise ValueError(f"AUDITOR_HORIZON must be positive, not {self.horizon_days}")
        if self.record_batch < 1 or self.max_body < 0:
            raise ValueError("AUDITOR_RECORD_BATCH must be >= 1 and AUDITOR_MAX_BODY >= 0")

    def now(self) -> datetime:
        """The clock's time, checked aware."""
        moment = self.clock()
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError(f"AUDITOR_CLOCK gave a naive time: {moment!r}")
        return moment


def _clock(value: Any) -> Callable[[], datetime]:
    if value in (None, ""):
        return _now
    found = load_object(value) if isinstance(value, str) else value
    if not callable(found):
        raise ValueError(f"AUDITOR_CLOCK must be callable, not {found!r}")
    return cast("Callable[[], datetime]", found)
