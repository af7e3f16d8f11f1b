"""The serve tests' histories: ``db_url`` is a new SQLite file or a new PostgreSQL
database (owned by a plain role) on the session's server; ``audited`` is the demo's nine
sites audited twice and a mixed site with a hostile page (markup in its URL and its title)
audited twice, on SQLite, and ``history_url`` the same history on each backend (on
PostgreSQL copied in and read through a role that may only read)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.demo import run_demo
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, PageState
from auditor.history import History
from auditor.sampler import SampleOptions
from tests.history.conftest import WRITER, backend, db_url  # noqa: F401 - the same fixtures
from tests.report.conftest import HOSTILE, HostileSite

#: The role the served PostgreSQL history is read through: SELECT on its tables, no more.
READER = "auditor_reader"


@dataclass(frozen=True)
class Audited:
    """The SQLite history, its sites by demo name, and the hostile site's origin."""

    database: Path
    origins: dict[str, str]
    hostile: str


@pytest.fixture(scope="session")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Audited:
    folder = tmp_path_factory.mktemp("served")
    rows, _ = run_demo(folder)
    database = folder / "history.sqlite3"
    sections = {"products": BEHAVIOURS["generation-time"], "blog": BEHAVIOURS["accurate-jsonld"]}
    site = HostileSite("hostile", sections, pages_per_section=30, seed=5)
    first = next(p for p in site.pages.values() if p.section == "blog")
    site.pages[HOSTILE] = PageState(HOSTILE, "blog", first.created, first.modified)
    options = AuditOptions(sample=SampleOptions(sample=30, delay=0.0, sequential=False), seed=5)
    with SiteServer(site) as server, History.open(database) as history:
        audit_site(server.origin, history, options)
        site.tick()
        audit_site(server.origin, history, options)
        hostile = server.origin
    return Audited(database, {row.name: row.origin for row in rows}, hostile)


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def history_url(request: pytest.FixtureRequest, audited: Audited) -> str:
    """The audited history on each backend (PostgreSQL: read through a read-only role)."""
    if request.param == "sqlite":
        return str(audited.database)
    from auditor.history.copy import copy_history

    server = request.getfixturevalue("postgres_server")
    url = server.new_database(WRITER)
    with History.open(audited.database) as source, History.open(url) as target:
        copy_history(source, target)
    server.role(READER)
    dbname = url.rsplit("/", 1)[1]
    server.admin(
        f'GRANT USAGE ON SCHEMA public TO "{READER}"',
        f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{READER}"',
        dbname=dbname,
    )
    return server.url(dbname, READER)
