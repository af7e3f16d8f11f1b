"""The views of migration ``0011-latest-views`` (one site's rows through indexes) give
exactly what the window-function views before them gave, and a query for one site reads
only that site's rows, on both backends."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from auditor.history import MIGRATIONS, History
from auditor.history.backend import Database
from auditor.history.db import _open, migrate
from auditor.history.location import locate
from auditor.history.records import instant_text
from tests.history.backends import is_postgres, raw
from tests.history.conftest import WRITER
from tests.history.helpers import STARTED

VIEWS = ("latest_site_verdicts", "latest_segment_verdicts")

#: The views as migrations 0003 to 0008 made them (window functions over every run of every
#: site), the reference the new ones must equal; ``{since}`` and the like are the casts.
OLD_SITES = """WITH ordered AS (
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

OLD_SEGMENTS = """WITH latest AS (
    SELECT x.id AS run_id FROM (
        SELECT r.id, row_number() OVER (PARTITION BY r.site_id
                                        ORDER BY r.started_at DESC, r.id DESC) AS newest
        FROM runs r) x
    WHERE x.newest = 1
), ordered AS (
    SELECT r.site_id, g.sitemap, g.group_pattern, g.run_id, g.position, g.verdict,
           r.started_at, r.finished_at,
           CASE WHEN g.verdict = lag(g.verdict) OVER w THEN 0 ELSE 1 END AS turn
    FROM segments g JOIN runs r ON r.id = g.run_id
    WINDOW w AS (PARTITION BY r.site_id, g.sitemap, g.group_pattern
                 ORDER BY r.started_at, r.id, g.position)
), streaks AS (
    SELECT o.*, sum(o.turn) OVER (PARTITION BY o.site_id, o.sitemap, o.group_pattern
                                  ORDER BY o.started_at, o.run_id, o.position) AS streak
    FROM ordered o
), marked AS (
    SELECT t.*, min(t.started_at) OVER (PARTITION BY t.site_id, t.sitemap, t.group_pattern,
                                                     t.streak)
           AS since
    FROM streaks t
)
SELECT s.origin AS site, m.sitemap, m.verdict, {since} AS since, m.run_id,
       {started_at} AS started_at, {finished_at} AS finished_at, g.urls, g.compared,
       g.changed, g.lastmod_advanced, g.change_rate, g.recheck_days, g.precision, g.recall,
       g.group_pattern
FROM marked m JOIN latest l ON l.run_id = m.run_id JOIN sites s ON s.id = m.site_id
     JOIN segments g ON g.run_id = m.run_id AND g.position = m.position"""


def old_query(url: str, view: str) -> str:
    """The old view's query in the dialect of ``url``."""
    template = OLD_SITES if view == "latest_site_verdicts" else OLD_SEGMENTS
    if is_postgres(url):
        instant = "CAST(m.{} AS timestamptz)".format
        figure = "CAST(CAST(r.result AS json) #>> '{{changes,{}}}' AS double precision)".format
    else:
        instant = "m.{}".format
        figure = "json_extract(r.result, '$.changes.{}')".format
    values = {name: instant(name) for name in ("since", "started_at", "finished_at")}
    return template.format(**values, precision=figure("precision"), recall=figure("recall"))


VERDICTS = ("trusted", "untrusted", "partial")
SITEMAPS = ("news.xml", "blog.xml")
GROUPS = (None, "/p/*", "/q/*")
RUN_COLUMNS = ("id", "site_id", "started_at", "finished_at", "verdict", "recheck_days",
               "result")  # fmt: skip
SEGMENT_COLUMNS = ("run_id", "position", "sitemap", "urls", "verdict", "reasons", "agree",
                   "disagree", "compared", "changed", "lastmod_advanced", "change_rate",
                   "recheck_days", "precision", "recall", "group_pattern")  # fmt: skip


def _origin(n: int) -> str:
    return f"https://site{n}.example"


def _fill(database: Database, seed: int, sites: int = 14) -> None:
    """Sites of 0 to 12 runs of random verdicts (two or three, so streaks form), started
    on a few days (ties in ``started_at``; ids not in start order), each with segments of
    random verdicts: both files, whole or in groups, positions shuffled, now and then one
    file and group twice in a run. Site 0 has no run, site 1 one."""
    rng = random.Random(seed)
    site_rows = [(n + 1, _origin(n), instant_text(STARTED)) for n in range(sites)]
    planned: list[tuple[int, datetime, str, list[tuple[str, str | None, str]]]] = []
    for n in range(sites):
        verdicts = VERDICTS[: rng.choice((2, 3))]
        keys = [(m, g) for m in SITEMAPS for g in GROUPS if rng.random() < 0.6]
        for _ in range(0 if n == 0 else 1 if n == 1 else rng.randint(1, 12)):
            chosen = [k for k in keys if rng.random() < 0.8]
            if chosen and rng.random() < 0.3:
                chosen.append(rng.choice(chosen))
            rng.shuffle(chosen)
            started = STARTED + timedelta(days=rng.randint(0, 6))
            marks = [(f"{_origin(n)}/{m}", g, rng.choice(verdicts)) for m, g in chosen]
            planned.append((n + 1, started, rng.choice(verdicts), marks))
    rng.shuffle(planned)  # ids not in the order of starts
    run_rows: list[tuple[Any, ...]] = []
    segment_rows: list[tuple[Any, ...]] = []
    for run_id, (site_id, started, verdict, marks) in enumerate(planned, start=1):
        changes = None if rng.random() < 0.3 else {"precision": rng.random(), "recall": 0.5}
        recheck = rng.choice((None, 1.0, 3.5))
        finished = started + timedelta(minutes=rng.randint(1, 9))
        run_rows.append((run_id, site_id, instant_text(started), instant_text(finished),
                         verdict, recheck, json.dumps({"changes": changes})))  # fmt: skip
        for position, (sitemap, group, marked) in enumerate(marks):
            figure, rate = rng.choice((None, 0.25)), rng.choice((None, 0.1))
            segment_rows.append((run_id, position, sitemap, rng.randint(1, 50), marked, "[]",
                                 1, 0, rng.randint(0, 5), rng.randint(0, 3), 0, rate,
                                 recheck, figure, figure, group))  # fmt: skip
    with database.write():
        database.insert_rows("sites", ("id", "origin", "created_at"), site_rows)
        database.insert_rows("runs", RUN_COLUMNS, run_rows)
        database.insert_rows("segments", SEGMENT_COLUMNS, segment_rows)


def _rows(database: Database, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return sorted(database.described(sql, params)[1], key=repr)


@pytest.mark.parametrize("seed", range(4))
def test_the_views_give_what_the_window_functions_gave(db_url, seed):
    """Every row of either view, and each site's rows asked for by ``WHERE site = ?``
    (a site with no run and an unknown one included), as the old queries gave them."""
    with History.open(db_url) as history:
        database = history._db
        _fill(database, seed)
        for view in VIEWS:
            old = old_query(db_url, view)
            columns, _ = database.described(f"{old} LIMIT 0")
            assert database.described(f"SELECT * FROM {view} LIMIT 0")[0] == columns
            expected = _rows(database, old)
            assert _rows(database, f"SELECT * FROM {view}") == expected
            assert len({row[0] for row in expected}) == 13  # every site with a run
            for n in range(15):  # site 14 does not exist
                wanted = [row for row in expected if row[0] == _origin(n)]
                one = _rows(database, f"SELECT * FROM {view} WHERE site = ?", (_origin(n),))
                assert one == wanted


def test_the_views_keep_their_column_types(db_url):
    """Each column has the type it had: SQLite's declared types (``PRAGMA table_info``),
    PostgreSQL's (``pg_attribute``), compared with views made of the old queries."""
    with History.open(db_url) as history:
        for view in VIEWS:
            history._db.execute(f"CREATE VIEW old_{view} AS {old_query(db_url, view)}")
    for view in VIEWS:
        assert _types(db_url, view) == _types(db_url, f"old_{view}")


def _types(url: str, view: str) -> list[tuple[Any, ...]]:
    if is_postgres(url):
        return raw(
            url,
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = CAST(? AS regclass) AND attnum > 0 ORDER BY attnum",
            (view,),
        )
    return [(row[1], row[2]) for row in raw(url, f"PRAGMA table_info({view})")]


def _scans(url: str, sql: str, params: tuple[Any, ...]) -> list[str]:
    """How ``sql`` reads each table: SQLite's ``EXPLAIN QUERY PLAN`` lines (``SCAN`` is a
    full scan, ``SEARCH`` an index lookup); on PostgreSQL each scan node of ``EXPLAIN``
    as ``SCAN relation`` when it reads a whole table or index (a sequential scan, an
    index scan with no condition), else ``SEARCH relation``."""
    if not is_postgres(url):
        return [str(row[3]) for row in raw(url, f"EXPLAIN QUERY PLAN {sql}", params)]
    import psycopg

    with psycopg.connect(url) as conn:
        query = f"EXPLAIN (FORMAT JSON) {sql}".replace("?", "%s")
        ((plan,),) = conn.execute(query, params).fetchall()  # type: ignore[arg-type]
    found: list[str] = []
    nodes = [plan[0]["Plan"]]
    while nodes:
        node = nodes.pop()
        nodes += node.get("Plans", [])
        kind = node["Node Type"]
        if kind == "Seq Scan" or (kind.endswith("Index Scan") and "Index Cond" not in node):
            found.append(f"SCAN {node.get('Relation Name', node.get('Index Name'))}")
        elif kind.endswith("Index Scan") or kind == "Index Only Scan":
            found.append(f"SEARCH {node.get('Relation Name', node.get('Index Name'))}")
    return found


@pytest.fixture(scope="module")
def planned(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[Callable[[str], str]]:
    """Where a history of 2,000 sites (about 13,000 runs) is, on each backend, its
    statistics gathered: enough rows that PostgreSQL's planner, rightly reading a table of
    a few pages whole, has a reason to use an index (PostgreSQL created on first use)."""
    urls = {"sqlite": str(tmp_path_factory.mktemp("planned") / "history.sqlite3")}

    def url(backend: str) -> str:
        if backend not in urls:
            server = request.getfixturevalue("postgres_server")
            urls[backend] = str(server.new_database(WRITER))
        with History.open(urls[backend]) as history:
            if not history._db.described("SELECT id FROM sites LIMIT 1")[1]:
                _fill(history._db, 1, sites=2_000)
                history._db.execute("ANALYZE")
        return urls[backend]

    yield url


@pytest.mark.parametrize("view", VIEWS)
def test_one_site_is_read_through_indexes_only(planned, backend, view):
    db_url = planned(backend)
    one = (_origin(3),)
    scans = _scans(db_url, f"SELECT * FROM {view} WHERE site = ?", one)
    assert scans and not [scan for scan in scans if scan.startswith("SCAN")]
    assert any(scan.startswith("SEARCH") for scan in scans)
    before = _scans(db_url, f"SELECT * FROM ({old_query(db_url, view)}) x WHERE site = ?", one)
    assert [scan for scan in before if scan.startswith("SCAN")]  # the test sees a full scan


def test_a_history_of_version_10_gets_the_new_views(db_url, backend, new_db):
    """Migration 0011 replaces the window-function views of a history that has them with
    the views a new history gets: the same rows, one site read through indexes."""
    names = tuple(migration.name for migration in MIGRATIONS)
    version = names.index("0011-latest-views")
    database = _open(locate(db_url))
    try:
        database.prepare()
        migrate(database, upto=version)
        _fill(database, 7, sites=2_000)  # enough for PostgreSQL to plan index lookups
        before = {view: _rows(database, f"SELECT * FROM {view}") for view in VIEWS}
    finally:
        database.close()
    old = {view: _definition(db_url, view) for view in VIEWS}
    with History.open(db_url) as history:
        assert history.applied == names[version:]
        for view in VIEWS:
            assert _rows(history._db, f"SELECT * FROM {view}") == before[view]
    fresh = new_db(backend)
    with History.open(fresh):
        pass
    for view in VIEWS:
        assert _definition(db_url, view) == _definition(fresh, view) != old[view]
    raw(db_url, "ANALYZE")
    for view in VIEWS:
        scans = _scans(db_url, f"SELECT * FROM {view} WHERE site = ?", (_origin(2),))
        assert not [scan for scan in scans if scan.startswith("SCAN")]


def test_a_teams_view_and_a_readers_grant_outlive_the_migration(db_url, request):
    """A view a team built on ours, and (PostgreSQL) the SELECT granted on ours to a
    read-only role, still work once migration 0011 has re-made them."""
    names = tuple(migration.name for migration in MIGRATIONS)
    database = _open(locate(db_url))
    try:
        database.prepare()
        migrate(database, upto=names.index("0011-latest-views"))
        _fill(database, 3)
        database.execute("CREATE VIEW team_view AS SELECT site, verdict FROM latest_site_verdicts")
    finally:
        database.close()
    if is_postgres(db_url):
        request.getfixturevalue("postgres_server").role("reader")
        raw(db_url, f"GRANT SELECT ON team_view, {', '.join(VIEWS)} TO reader")
    before = sorted(raw(db_url, "SELECT * FROM team_view"))
    with History.open(db_url) as history:
        assert "0011-latest-views" in history.applied
    assert sorted(raw(db_url, "SELECT * FROM team_view")) == before
    if is_postgres(db_url):
        reader = db_url.replace(f"//{WRITER}@", "//reader@")
        assert sorted(raw(reader, "SELECT * FROM team_view")) == before
        for view in VIEWS:
            assert raw(reader, f"SELECT count(*) FROM {view}")[0][0] > 0


def _definition(url: str, view: str) -> str:
    if is_postgres(url):
        ((text,),) = raw(url, "SELECT pg_get_viewdef(CAST(? AS regclass))", (view,))
    else:
        ((text,),) = raw(url, "SELECT sql FROM sqlite_master WHERE name = ?", (view,))
    return str(text)
