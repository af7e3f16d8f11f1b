"""The one exception tree of auditor.

Failures of a single file or page are values (``Problem``), never exceptions.
Exceptions are for what stops a whole command::

    AuditorError
    ├── UsageError            a target or option that cannot be used
    ├── NothingReadable       no sitemap at all could be read for the target
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
