"""A PostgreSQL history whose server restarts (a real server of its own, stopped with a
fast shutdown and started again on the same port): the connection is made again and the
save retried whole, once; past the reconnect window the history says why."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from auditor.errors import HistoryError, HistoryLost
from auditor.history import History
from tests.history.conftest import WRITER
from tests.history.helpers import STARTED, entries, files, pages, result
from tests.pgserver import PostgresServer, running_server

DOWN = 3.0  # seconds the server is down


@pytest.fixture(scope="module")
def own_server() -> Iterator[PostgresServer]:
    """A server of this module's own: halting it must not disturb the other tests'."""
    with running_server() as server:
        yield server


def _save(history: History, site: str = "https://example.com", **kwargs: object) -> int:
    return history.save_run(
        result(site), files=files(site), entries=entries(site), pages=pages(site), **kwargs
    )  # type: ignore[arg-type]


@contextmanager
def _restarted(server: PostgresServer, down: float) -> Iterator[None]:
    """The server is halted now and started again ``down`` seconds later, meanwhile."""
    server.halt()
    later = threading.Timer(down, server.resume)
    later.start()
    try:
        yield
    finally:
        later.join()


def test_a_save_after_a_restart_reconnects_and_saves_once(own_server):
    url = own_server.new_database(WRITER)
    with History.open(url) as history:
        assert _save(history) == 1
        began = time.monotonic()
        with _restarted(own_server, DOWN):
            assert _save(history) == 2  # the connection was lost: made again, then saved
        took = time.monotonic() - began
        assert DOWN <= took < DOWN + 5  # backoff at most 2 s, and the server's own start
        assert [r.run_id for r in history.runs()] == [1, 2]
        assert len(history.pages(2)) == len(pages())


def test_past_the_reconnect_window_the_history_says_why_and_keeps_what_it_had(own_server):
    url = own_server.new_database(WRITER)
    with History.open(url, reconnect=1.0) as history:
        assert _save(history) == 1
        own_server.halt()
        try:
            began = time.monotonic()
            with pytest.raises(HistoryError, match="could not be made again within 1 s"):
                _save(history)
            assert time.monotonic() - began < 4
        finally:
            own_server.resume()
        assert _save(history) == 2  # the server is back: the next save connects again
        assert [r.run_id for r in history.runs()] == [1, 2]


def test_a_save_whose_commit_landed_but_whose_answer_was_lost_is_not_saved_twice(own_server):
    """The commit reached the server, the connection broke before its answer came back:
    the retried save finds the run by its key rather than saving it again."""
    url = own_server.new_database(WRITER)
    with History.open(url) as history:
        database = history._db
        write, lost = database.write, []

        @contextmanager
        def answer_lost() -> Iterator[None]:
            with write():
                yield
            if not lost:  # committed; the answer lost once
                lost.append(True)
                raise HistoryLost("the connection was lost (simulated, after COMMIT)")

        database.write = answer_lost  # type: ignore[method-assign]
        assert _save(history) == 1
        assert lost and [r.run_id for r in history.runs()] == [1]


def test_the_same_run_key_saves_one_run(db_url):
    with History.open(db_url) as history:
        first = _save(history, key="night-1/example.com")
        assert _save(history, key="night-1/example.com") == first
        assert _save(history) == first + 1
        assert [r.started_at for r in history.runs()] == [STARTED, STARTED]
