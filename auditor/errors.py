"""The one exception tree of auditor.

Failures of a single file or page are values (``Problem``), never exceptions.
Exceptions are for what stops a whole command::

    AuditorError
    ├── UsageError            a target or option that cannot be used
    ├── NothingReadable       no sitemap at all could be read for the target
    ├── Unreachable           nothing of the target answered (refused, no name, no TLS, ...)
    ├── HistoryError          the history database cannot be used (damaged, newer, busy)
    │   └── HistoryLost       the connection to it was lost (PostgreSQL restarted, cut off)
    └── FleetStopped          a fleet cannot go on (its Dask scheduler was lost)

Touches: nothing.
"""

from __future__ import annotations


class AuditorError(Exception):
    """Base class of every exception auditor raises on purpose."""


class UsageError(AuditorError):
    """The caller asked for something that cannot be done (bad target, bad option)."""


class NothingReadable(AuditorError):
    """Not one sitemap could be read for the target."""


class Unreachable(AuditorError):
    """A target never reached: no request of its walk got an HTTP response (the
    connection refused, the name not resolved, the TLS handshake failed, no answer in
    time). Not a finding about the site: nothing of it is saved."""

    def __init__(self, site: str, cause: str) -> None:
        super().__init__(site, cause)
        self.site = site
        self.cause = cause  # in plain words: "connection refused", "name not resolved"

    def __str__(self) -> str:
        return f"could not reach {self.site}: {self.cause}"


class HistoryError(AuditorError):
    """The history database cannot be opened or used: not SQLite, damaged, made by a
    newer auditor, or locked for longer than the busy timeout. Nothing was changed."""


class HistoryLost(HistoryError):
    """The connection to a PostgreSQL history was lost mid-way (the server restarted, the
    network cut). Whatever statement or transaction was under way did not happen, or its
    commit went unconfirmed: :meth:`~auditor.history.backend.Database.retried` runs it
    again whole on a new connection."""


class FleetStopped(AuditorError):
    """A fleet cannot go on: its Dask scheduler is gone. The runs saved before stay."""
