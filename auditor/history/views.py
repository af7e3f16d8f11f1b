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

The SQL is written once; only the casts differ between dialects (an instant, a number
inside the stored result JSON).
"""

from __future__ import annotations

from auditor.history.backend import Dialects

__all__ = ["SEGMENT_GROUPS", "SEGMENT_PRECISION", "TEAM_HISTORY"]

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


def _sqlite_figure(name: str) -> str:
    return f"json_extract(r.result, '$.changes.{name}')"


def _postgresql_figure(name: str) -> str:
    return f"CAST(CAST(r.result AS json) #>> '{{changes,{name}}}' AS double precision)"


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
