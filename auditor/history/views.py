"""Views for the tools a team already has (pandas.read_sql, Metabase, Superset): the
latest verdict of every site and of every sub-sitemap, and since when it holds.

``latest_site_verdicts`` (contract), one row per site::

    site, verdict, since, run_id, started_at, finished_at, runs, precision, recall,
    recheck_days

``latest_segment_verdicts`` (contract), one row per segment of each site's latest run (a
sub-sitemap, or one group of it: ``group_pattern``, null for a whole file)::

    site, sitemap, verdict, since, run_id, started_at, finished_at, urls, compared,
    changed, lastmod_advanced, change_rate, recheck_days, precision, recall, group_pattern

``since`` is when the run that opened the current unbroken streak of that verdict
started. ``precision`` and ``recall`` are the latest run's across-runs figures (null on a
first run, when nothing advanced or changed, and, per sub-sitemap, for runs saved before
migration ``0004-segment-precision``). Instants are ISO 8601 text in UTC on SQLite,
``timestamptz`` on PostgreSQL.

The SQL is written once where it can be; the casts differ between dialects (an instant,
a number inside the stored result JSON), and so does how the views reach each site's rows.

Since migration ``0011-latest-views`` both views start from ``sites`` and reach each
site's rows through indexes only (``sites.origin``, ``runs_by_site`` on ``runs(site_id,
started_at, id)``, the primary key ``(run_id, position)`` of ``segments``), so a query
``WHERE site = ?`` reads that site's runs and nothing else. The latest run is the last of
``runs_by_site`` for the site; ``since`` the earliest start after the last run (segment of
the same file and group) before it whose verdict differs, in the order ``(started_at, id)``
(``(started_at, run id, position)`` for segments), else the first one's. On PostgreSQL the
segments' streaks are window functions over the site's own segments (see
``_LATEST_SEGMENT_ROWS``). The views of migrations ``0003`` to ``0008`` computed the same
with window functions over every run of every site: 19.7 s for one site of a 100,000-site
history.

Touches: nothing.
"""

from __future__ import annotations

from auditor.history.backend import Dialects

__all__ = ["LATEST_VIEWS", "SEGMENT_GROUPS", "SEGMENT_PRECISION", "TEAM_HISTORY"]

#: The views of migrations 0003-0008 (window functions over every run), kept as they
#: were run: a migration replays the same statements on every history it upgrades.
_SITES = """CREATE VIEW latest_site_verdicts AS
WITH ordered AS (
    SELECT r.site_id, r.id AS run_id, r.verdict, r.started_at, r.finished_at,
           CASE WHEN r.verdict = lag(r.verdict) OVER w THEN 0 ELSE 1 END AS turn
    FROM runs r
    WINDOW w AS (PARTITION BY r.site_id ORDER BY r.started_at, r.id)
), streaks AS (
    SELECT o.*,
           sum(o.turn) OVER (PARTITION BY o.site_id ORDER BY o.started_at, o.run_id) AS streak,
           count(*) OVER (PARTITION BY o.site_id) AS runs,
           row_number() OVER (PARTITION BY o.site_id
                              ORDER BY o.started_at DESC, o.run_id DESC) AS newest
    FROM ordered o
), marked AS (
    SELECT t.*, min(t.started_at) OVER (PARTITION BY t.site_id, t.streak) AS since
    FROM streaks t
)
SELECT s.origin AS site, m.verdict, {since} AS since, m.run_id,
       {started_at} AS started_at, {finished_at} AS finished_at, m.runs,
       {precision} AS precision, {recall} AS recall, r.recheck_days
FROM marked m JOIN sites s ON s.id = m.site_id JOIN runs r ON r.id = m.run_id
WHERE m.newest = 1"""

_SEGMENTS = """CREATE VIEW latest_segment_verdicts AS
WITH latest AS (
    SELECT x.id AS run_id FROM (
        SELECT r.id, row_number() OVER (PARTITION BY r.site_id
                                        ORDER BY r.started_at DESC, r.id DESC) AS newest
        FROM runs r) x
    WHERE x.newest = 1
), ordered AS (
    SELECT r.site_id, g.sitemap{group_g}, g.run_id, g.position, g.verdict, r.started_at,
           r.finished_at,
           CASE WHEN g.verdict = lag(g.verdict) OVER w THEN 0 ELSE 1 END AS turn
    FROM segments g JOIN runs r ON r.id = g.run_id
    WINDOW w AS (PARTITION BY r.site_id, g.sitemap{group_g}
                 ORDER BY r.started_at, r.id, g.position)
), streaks AS (
    SELECT o.*, sum(o.turn) OVER (PARTITION BY o.site_id, o.sitemap{group_o}
                                  ORDER BY o.started_at, o.run_id, o.position) AS streak
    FROM ordered o
), marked AS (
    SELECT t.*, min(t.started_at) OVER (PARTITION BY t.site_id, t.sitemap{group_t}, t.streak)
           AS since
    FROM streaks t
)
SELECT s.origin AS site, m.sitemap, m.verdict, {since} AS since, m.run_id,
       {started_at} AS started_at, {finished_at} AS finished_at, g.urls, g.compared,
       g.changed, g.lastmod_advanced, g.change_rate, g.recheck_days{segment_figures}
FROM marked m JOIN latest l ON l.run_id = m.run_id JOIN sites s ON s.id = m.site_id
     JOIN segments g ON g.run_id = m.run_id AND g.position = m.position"""


def _sqlite(column: str) -> str:
    return f"m.{column}"


def _postgresql(column: str) -> str:
    return f"CAST(m.{column} AS timestamptz)"


def _sqlite_figure(name: str, run: str = "r") -> str:
    return f"json_extract({run}.result, '$.changes.{name}')"


def _postgresql_figure(name: str, run: str = "r") -> str:
    return f"CAST(CAST({run}.result AS json) #>> '{{changes,{name}}}' AS double precision)"


def _both(
    template: str, figures: bool, segment_figures: str = "", *, grouped: bool = False
) -> Dialects:
    texts = {}
    for dialect, instant, figure in (
        ("sqlite", _sqlite, _sqlite_figure),
        ("postgresql", _postgresql, _postgresql_figure),
    ):
        values = {name: instant(name) for name in ("since", "started_at", "finished_at")}
        values["segment_figures"] = segment_figures
        values |= {f"group_{t}": f", {t}.group_pattern" if grouped else "" for t in "got"}
        if figures:
            values |= {name: figure(name) for name in ("precision", "recall")}
        texts[dialect] = template.format(**values)
    return Dialects(**texts)


#: PostgreSQL would try to compress each url_state blob (already zlib'd) before storing
#: it: a million URLs saved in 0.55 s instead of 0.15 s. SQLite never compresses.
_STORED_AS_IS = Dialects(
    sqlite=None, postgresql="ALTER TABLE url_state ALTER COLUMN data SET STORAGE EXTERNAL"
)

#: The migration of a history a team shares: both views, and url_state stored as is.
TEAM_HISTORY: tuple[Dialects, ...] = (_both(_SITES, True), _both(_SEGMENTS, False), _STORED_AS_IS)

#: The migration giving each sub-sitemap its own across-runs precision and recall: two
#: columns of ``segments`` (null for runs saved before), and the segment view re-created
#: with them after its earlier columns.
SEGMENT_PRECISION: tuple[str | Dialects, ...] = (
    "ALTER TABLE segments ADD COLUMN precision REAL",
    "ALTER TABLE segments ADD COLUMN recall REAL",
    "DROP VIEW latest_segment_verdicts",
    _both(_SEGMENTS, False, ", g.precision, g.recall"),
)

#: The migration giving each segment its group (a file split into groups has one row per
#: group, ``group_pattern`` naming it; null for a whole file and for runs saved before),
#: and the segment view re-created with streaks per group, the pattern its last column.
SEGMENT_GROUPS: tuple[str | Dialects, ...] = (
    "ALTER TABLE segments ADD COLUMN group_pattern TEXT",
    "DROP VIEW latest_segment_verdicts",
    _both(_SEGMENTS, False, ", g.precision, g.recall, g.group_pattern", grouped=True),
)

#: The latest run ``m`` of each site ``s``: the last of ``runs_by_site`` for it. SQLite has
#: no LATERAL; PostgreSQL, given the join of SQLite's words, hashes every run for the
#: whole view (the lateral subquery reads one a site).
_LATEST_RUN = {
    "sqlite": """JOIN runs m ON m.id = (
    SELECT l.id FROM runs l WHERE l.site_id = s.id
    ORDER BY l.started_at DESC, l.id DESC LIMIT 1)""",
    "postgresql": """CROSS JOIN LATERAL (
    SELECT l.* FROM runs l WHERE l.site_id = s.id
    ORDER BY l.started_at DESC, l.id DESC LIMIT 1) m""",
}

_LATEST_SITES = """CREATE VIEW latest_site_verdicts AS
SELECT s.origin AS site, m.verdict, {since} AS since, m.id AS run_id,
       {started_at} AS started_at, {finished_at} AS finished_at,
       (SELECT count(*) FROM runs c WHERE c.site_id = s.id) AS runs,
       {precision} AS precision, {recall} AS recall, m.recheck_days
FROM sites s {latest}"""

#: When the streak of the latest run ``m`` of site ``s`` began: the earliest start after
#: its last run of another verdict, else its first run's.
_SITE_SINCE = """coalesce(
    (SELECT min(f.started_at) FROM runs f
     WHERE f.site_id = s.id AND (f.started_at, f.id) > (
         SELECT d.started_at, d.id FROM runs d
         WHERE d.site_id = s.id AND d.verdict <> m.verdict
         ORDER BY d.started_at DESC, d.id DESC LIMIT 1)),
    (SELECT min(f.started_at) FROM runs f WHERE f.site_id = s.id))"""

_LATEST_SEGMENTS = """CREATE VIEW latest_segment_verdicts AS
SELECT s.origin AS site, g.sitemap, g.verdict, {since} AS since, g.run_id,
       {started_at} AS started_at, {finished_at} AS finished_at, g.urls, g.compared,
       g.changed, g.lastmod_advanced, g.change_rate, g.recheck_days, g.precision,
       g.recall, g.group_pattern
FROM sites s {latest}
{segments}"""

#: When the streak of segment ``g`` (of the latest run ``m`` of site ``s``) began. SQLite:
#: the earliest start after the site's last segment before ``g`` of the same file and
#: group with another verdict (segments in the order of runs, then positions), else the
#: first such segment's start; read through ``runs_by_site`` and the segments of each run.
#: PostgreSQL: ``k.since`` (see ``_LATEST_SEGMENT_ROWS``).
_SEGMENT_SINCE = {
    "sqlite": """coalesce(
    (SELECT min(fr.started_at) FROM runs fr JOIN segments fg ON fg.run_id = fr.id
     WHERE fr.site_id = s.id AND fg.sitemap = g.sitemap
       AND fg.group_pattern IS g.group_pattern
       AND (fr.started_at, fr.id, fg.position) > (
           SELECT dr.started_at, dr.id, dg.position
           FROM runs dr JOIN segments dg ON dg.run_id = dr.id
           WHERE dr.site_id = s.id AND dg.sitemap = g.sitemap
             AND dg.group_pattern IS g.group_pattern AND dg.verdict <> g.verdict
             AND (dr.started_at, dr.id, dg.position) < (m.started_at, m.id, g.position)
           ORDER BY dr.started_at DESC, dr.id DESC, dg.position DESC LIMIT 1)),
    (SELECT min(fr.started_at) FROM runs fr JOIN segments fg ON fg.run_id = fr.id
     WHERE fr.site_id = s.id AND fg.sitemap = g.sitemap
       AND fg.group_pattern IS g.group_pattern))""",
    "postgresql": "k.since",
}

#: The segments of the latest run ``m``; on PostgreSQL with their streaks ``k``, over this
#: site's segments only: a segment's ``since`` is the start of the latest segment at or
#: before it, of its file and group, whose verdict differs from the one before it (one
#: window order, one sort). Not SQLite's subqueries: PostgreSQL's planner takes
#: ``sitemap = g.sitemap`` for a filter of one row and reads the whole ``segments`` table
#: for each segment (44 s for the 6,400 segments of 2,000 sites before ANALYZE, 0.63 s
#: after; the old view 0.14 s). ``OFFSET 0`` keeps two subqueries out of the join
#: (PostgreSQL never merges one that has it): the segments of each run, so they are read by
#: the primary key run by run whatever the statistics say (before ANALYZE the planner hashed
#: the whole table: 9 s), and ``k``, so the rows of the latest run are picked before, not
#: after, every segment of the site is joined with its row and with the latest run.
_LATEST_SEGMENT_ROWS = {
    "sqlite": "JOIN segments g ON g.run_id = m.id",
    "postgresql": """CROSS JOIN LATERAL (
    SELECT t.position, t.since FROM (
        SELECT o.run_id, o.position,
               max(CASE WHEN o.turn THEN o.started_at END) OVER w AS since
        FROM (
            SELECT e.sitemap, e.group_pattern, e.run_id, e.position, r.started_at,
                   e.verdict IS DISTINCT FROM lag(e.verdict) OVER w AS turn
            FROM runs r CROSS JOIN LATERAL (
                SELECT * FROM segments x WHERE x.run_id = r.id OFFSET 0) e
            WHERE r.site_id = s.id
            WINDOW w AS (PARTITION BY e.sitemap, e.group_pattern
                         ORDER BY r.started_at, e.run_id, e.position)) o
        WINDOW w AS (PARTITION BY o.sitemap, o.group_pattern
                     ORDER BY o.started_at, o.run_id, o.position)) t
    WHERE t.run_id = m.id OFFSET 0) k
JOIN segments g ON g.run_id = m.id AND g.position = k.position""",
}


def _latest(
    template: str, since: dict[str, str], segments: dict[str, str] | None = None
) -> Dialects:
    """``template`` in each dialect's words: ``since`` and the instants cast, figures
    read from the latest run's result, the latest run and its ``segments``."""
    texts = {}
    for dialect, instant, figure in (
        ("sqlite", _sqlite_instant, _sqlite_figure),
        ("postgresql", _postgresql_instant, _postgresql_figure),
    ):
        values = {
            "since": instant(since[dialect]),
            "started_at": instant("m.started_at"),
            "finished_at": instant("m.finished_at"),
            "precision": figure("precision", "m"),
            "recall": figure("recall", "m"),
            "latest": _LATEST_RUN[dialect],
            "segments": "" if segments is None else segments[dialect],
        }
        texts[dialect] = template.format(**values)
    replaced = texts["postgresql"].replace("CREATE VIEW", "CREATE OR REPLACE VIEW", 1)
    return Dialects(sqlite=texts["sqlite"], postgresql=replaced)


def _dropped(view: str) -> Dialects:
    """SQLite drops ``view`` before making it again; PostgreSQL replaces it in place."""
    return Dialects(sqlite=f"DROP VIEW {view}", postgresql=None)


def _sqlite_instant(expression: str) -> str:
    return expression


def _postgresql_instant(expression: str) -> str:
    return f"CAST({expression} AS timestamptz)"


#: The migration re-creating both views to read one site's rows only (same columns). On
#: PostgreSQL ``CREATE OR REPLACE VIEW``, which keeps what a drop would lose or refuse:
#: the grants of a team's read-only roles, and views a team built on these (it also refuses
#: a column of another name or type, the contract).
LATEST_VIEWS: tuple[str | Dialects, ...] = (
    _dropped("latest_site_verdicts"),
    _latest(_LATEST_SITES, {"sqlite": _SITE_SINCE, "postgresql": _SITE_SINCE}),
    _dropped("latest_segment_verdicts"),
    _latest(_LATEST_SEGMENTS, _SEGMENT_SINCE, _LATEST_SEGMENT_ROWS),
)
