"""The stored walks' side of the history: a plan's walk of a site's sitemaps, its
robots.txt as last read, and the freshest inventory (the latest run's or a later plan
walk's), as methods of :class:`~auditor.history.History` (a mixin).

Touches: the database.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from auditor.history import crawl, planreads, robots
from auditor.history.backend import Database
from auditor.history.records import RunRecord, instant, instant_text
from auditor.history.rows import file_dict, file_row
from auditor.history.state import decode_state, encode_state

if TYPE_CHECKING:
    import pandas as pd

    from auditor.models import SitemapFile

__all__ = ["WalkHistory"]


class WalkHistory:
    """The stored walks and robots.txt in the history (mixed into ``History``: its
    database, its sites' ids, latest runs and sitemap files)."""

    _db: Database

    def site_id(self, origin: str) -> int | None:
        """The id of a known site (``History`` gives it)."""
        raise NotImplementedError

    def latest_run(self, site: str) -> RunRecord | None:
        """The site's latest run (``History`` gives it)."""
        raise NotImplementedError

    def sitemap_files(self, run_id: int) -> list[dict[str, Any]]:
        """A run's sitemap files (``History`` gives them)."""
        raise NotImplementedError

    def save_plan_walk(
        self, site: str, walked_at: datetime, files: Sequence[SitemapFile], entries: pd.DataFrame
    ) -> None:
        """Keep a plan's walk of ``site``'s sitemaps (replacing the previous one)."""
        data = encode_state(entries)
        rows = crawl.files_json([file_row(f) for f in files])
        with self._db.write():
            site_id = self.site_id(site)
            if site_id is None:
                return
            self._db.execute(
                "INSERT INTO plan_walks (site_id, walked_at, files, urls, data)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (site_id) DO UPDATE SET"
                " walked_at = excluded.walked_at, files = excluded.files,"
                " urls = excluded.urls, data = excluded.data",
                (site_id, instant_text(walked_at), rows, len(entries), data),
            )

    def save_robots(self, site: str, found: robots.StoredRobots) -> None:
        """Keep ``found`` as ``site``'s robots.txt (:mod:`auditor.history.robots`), unless
        a later reading is kept; nothing for a site not in the history."""
        with self._db.write():
            site_id = self.site_id(site)
            if site_id is not None:
                robots.save_robots(self._db, site_id, found)

    def stored_robots(self, site: str) -> robots.StoredRobots | None:
        """``site``'s robots.txt as last read by an audit or a plan's walk, or None."""
        return robots.load_robots(self._db, site)

    def current_inventory(
        self, site: str
    ) -> tuple[datetime, list[dict[str, Any]], pd.DataFrame] | None:
        """The freshest walk of ``site``: its latest run's or a later plan's; as (when,
        its sitemap files as dicts, its entries), or None for a site never audited."""
        found = self.current_inventory_blob(site)
        if found is None:
            return None
        return found[0], found[1], decode_state(found[2])

    def stored_sites(self, origins: Sequence[str]) -> dict[str, planreads.StoredSite]:
        """What a plan on the stored walks reads of each of ``origins`` with a run, by
        origin, in four statements (:mod:`auditor.history.planreads`)."""
        return planreads.stored_sites(self._db, origins)

    def current_inventory_blob(
        self, site: str, *, with_files: bool = True
    ) -> tuple[datetime, list[dict[str, Any]], bytes] | None:
        """:meth:`current_inventory` with its entries still encoded (a ``url_state``
        blob: :func:`~auditor.history.state.state_locs` reads its locs without a frame);
        ``with_files`` False: its sitemap files not read (an empty list)."""
        latest = self.latest_run(site)
        if latest is None:
            return None
        rows = self._db.rows(
            "SELECT w.walked_at, w.files, w.data FROM plan_walks w"
            " JOIN sites s ON s.id = w.site_id WHERE s.origin = ?",
            (site,),
        )
        if rows and instant(rows[0][0]) > latest.started_at:
            walked = crawl.files_of_json(rows[0][1]) if with_files else []
            return instant(rows[0][0]), [file_dict(row) for row in walked], bytes(rows[0][2])
        state = self._db.rows(
            "SELECT u.data FROM url_state u JOIN sites s ON s.id = u.site_id WHERE s.origin = ?",
            (site,),
        )
        if not state:
            return None
        files = self.sitemap_files(latest.run_id) if with_files else []
        return latest.started_at, files, bytes(state[0][0])
