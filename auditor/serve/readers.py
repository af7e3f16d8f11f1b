"""One read-only history handle per thread for the server: a request's reads run in a
worker thread, and a database connection belongs to the thread that opened it. Each is
opened read-only (:meth:`~auditor.history.History.open`): the server never creates,
migrates or writes a history.

Touches: the database.
"""

from __future__ import annotations

import threading

from auditor.history import History

__all__ = ["Readers"]


class Readers:
    """One read-only History per thread, opened on first use; :meth:`close` closes them
    all. The first is opened at once, so a wrong location (a missing file, a history
    lacking migrations) fails before the server starts."""

    def __init__(self, location: str | None) -> None:
        self.location = location
        self._local = threading.local()
        self._opened: list[History] = []
        self._lock = threading.Lock()
        self.dialect = self.history().dialect

    def history(self) -> History:
        """This thread's handle."""
        handle: History | None = getattr(self._local, "history", None)
        if handle is None:
            handle = History.open(self.location, read_only=True)
            self._local.history = handle
            with self._lock:
                self._opened.append(handle)
        return handle

    def close(self) -> None:
        """Close every handle opened (idempotent)."""
        with self._lock:
            opened, self._opened = self._opened, []
        for handle in opened:
            handle.close()
