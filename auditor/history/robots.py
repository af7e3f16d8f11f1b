"""Each site's robots.txt as last read, so a plan made on the stored walk (no request)
leaves out what it disallows as a plan with a fresh walk does.

One table (migration ``0016-site-robots``): ``site_robots``, one row per site, written
by an audit (the policy its sampler obeyed) and by each plan's walk: when it was read,
its URL, the rule reached (``parsed``, ``allow-all``, ``disallow-all``: the sampler's,
:class:`~auditor.sampler.robots.RobotsPolicy`), what said so, and the file's text (as
decoded, at most Google's 500 KiB) when it was read. A history from before the migration
has no row until the site's next audit or plan walk.

Touches: the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from auditor.history.backend import Database
from auditor.history.records import instant, instant_text

__all__ = ["SITE_ROBOTS", "StoredRobots", "load_robots", "save_robots"]

SITE_ROBOTS = (
    """CREATE TABLE site_robots (
        site_id INTEGER PRIMARY KEY REFERENCES sites(id),
        read_at TEXT NOT NULL, url TEXT NOT NULL, rule TEXT NOT NULL, detail TEXT NOT NULL,
        body BLOB NOT NULL)""",
)


@dataclass(frozen=True)
class StoredRobots:
    """A site's robots.txt as kept: read ``read_at`` from ``url``, the ``rule`` reached
    and its ``detail``, and the file's ``text`` (empty unless ``rule`` is ``parsed``)."""

    url: str
    rule: str
    detail: str
    text: str
    read_at: datetime


def save_robots(db: Database, site_id: int, robots: StoredRobots) -> None:
    """Keep ``robots`` as the site's, unless what is kept was read later (inside the
    caller's write transaction)."""
    db.execute(
        "INSERT INTO site_robots (site_id, read_at, url, rule, detail, body)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (site_id) DO UPDATE SET"
        " read_at = excluded.read_at, url = excluded.url, rule = excluded.rule,"
        " detail = excluded.detail, body = excluded.body"
        " WHERE site_robots.read_at <= excluded.read_at",
        (site_id, instant_text(robots.read_at), robots.url, robots.rule, robots.detail,
         robots.text.encode("utf-8", "surrogatepass")),
    )  # fmt: skip


def load_robots(db: Database, origin: str) -> StoredRobots | None:
    """The robots.txt kept for the site ``origin``, or None."""
    rows = db.rows(
        "SELECT r.url, r.rule, r.detail, r.body, r.read_at FROM site_robots r"
        " JOIN sites s ON s.id = r.site_id WHERE s.origin = ?",
        (origin,),
    )
    if not rows:
        return None
    url, rule, detail, body, read_at = rows[0]
    text = bytes(body).decode("utf-8", "surrogatepass")
    return StoredRobots(str(url), str(rule), str(detail), text, instant(read_at))
