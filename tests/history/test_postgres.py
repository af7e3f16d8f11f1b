"""What only PostgreSQL has: column types, a schema of its own, roles and their rights,
a server that cannot be reached."""

from __future__ import annotations

import pytest

from auditor.errors import HistoryError
from auditor.history import History
from tests.history.backends import raw
from tests.history.conftest import WRITER
from tests.history.helpers import save


@pytest.fixture
def pg_url(postgres_server) -> str:
    """A new database owned by the plain role the tests write as."""
    return str(postgres_server.new_database(WRITER))


def _types(url: str, table: str) -> dict[str, str]:
    rows = raw(
        url,
        "SELECT column_name, data_type FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = ?",
        (table,),
    )
    return dict(rows)


def test_columns_get_postgresql_s_own_types(pg_url):
    with History.open(pg_url):
        pass
    pages, segments, state = (_types(pg_url, t) for t in ("pages", "segments", "url_state"))
    assert pages["fp_simhash"] == "bigint"  # unsigned 64-bit, stored as signed
    assert pages["fetched_at"] == "text"  # instants: ISO 8601 text, in order, as on SQLite
    assert segments["change_rate"] == "double precision"  # not PostgreSQL's 24-bit REAL
    assert state["data"] == "bytea"
    views = _types(pg_url, "latest_site_verdicts")
    assert views["since"] == "timestamp with time zone"
    assert views["precision"] == "double precision"


def test_an_unreachable_server_is_a_history_error_that_hides_the_password(postgres_server):
    url = f"postgresql://{WRITER}:s3cret@127.0.0.1:{postgres_server.port}/no_such_database"
    with pytest.raises(HistoryError, match="cannot connect to") as error:
        History.open(url)
    assert "s3cret" not in str(error.value) and ":***@" in str(error.value)


def test_a_schema_of_its_own_through_the_url(pg_url):
    raw(pg_url, "CREATE SCHEMA audits")  # (a schema named as the role would be first anyway)
    raw(pg_url, "CREATE TABLE public.notes (body TEXT)")  # the team's own tables beside
    in_schema = pg_url + "?options=-csearch_path%3Daudits"
    with History.open(in_schema) as history:
        assert save(history) == 1
    tables = raw(pg_url, "SELECT table_schema, count(*) FROM information_schema.tables"
                 " WHERE table_schema IN ('audits', 'public') GROUP BY 1 ORDER BY 1")  # fmt: skip
    assert tables[0][0] == "audits" and tables[0][1] > 6 and tables[1] == ("public", 1)
    with pytest.raises(HistoryError, match="something else"):  # public holds notes
        History.open(pg_url)


def test_a_search_path_that_names_no_schema_is_refused(pg_url):
    with pytest.raises(HistoryError, match="CREATE SCHEMA"):
        History.open(pg_url + "?options=-csearch_path%3Dnowhere")


def test_a_role_without_create_cannot_set_up_a_history(postgres_server, pg_url):
    postgres_server.role("visitor")  # CONNECT and USAGE on public, as every role has
    visitor = pg_url.replace(f"//{WRITER}@", "//visitor@")
    with pytest.raises(HistoryError, match="needs CREATE on the schema"):
        History.open(visitor)


def test_a_read_only_role_reads_a_history_but_cannot_write_it(postgres_server, pg_url):
    with History.open(pg_url) as history:
        save(history)
    postgres_server.role("reader")
    raw(pg_url, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    reader = pg_url.replace(f"//{WRITER}@", "//reader@")
    with History.open(reader) as history:
        assert history.applied == () and [r.run_id for r in history.runs()] == [1]
        assert len(history.table("pages")) == 3
        assert history._db.rows("SELECT verdict FROM latest_site_verdicts") == [("untrusted",)]
        with pytest.raises(HistoryError, match="permission denied"):
            save(history)


def test_inventories_are_stored_as_they_are(pg_url):
    """url_state blobs are zlib already: PostgreSQL is told not to compress them again."""
    with History.open(pg_url):
        pass
    storage = raw(
        pg_url,
        "SELECT attstorage FROM pg_attribute WHERE attrelid = 'url_state'::regclass"
        " AND attname = 'data'",
    )
    assert storage == [("e",)]  # EXTERNAL: out of line, uncompressed


def test_a_second_writer_role_needs_only_rights_on_the_tables(postgres_server, pg_url):
    with History.open(pg_url) as history:
        save(history)
    postgres_server.role("worker")
    raw(pg_url, "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO worker")
    with History.open(pg_url.replace(f"//{WRITER}@", "//worker@")) as history:
        assert save(history) == 2  # a new run of a known site: url_state updated too
        assert save(history, "https://new.example") == 3
