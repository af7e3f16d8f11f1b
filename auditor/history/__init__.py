"""History: past audits in a SQLite file or a PostgreSQL database, the one door to it.

No other module talks to the history database (sqlite3, psycopg). ::

    with History.open() as history:          # --db DB, else AUDITOR_DB, else the default
        run_id = history.save_run(result, files=files, entries=entries, pages=pages)
        history.latest_entries(site)          # the previous inventory, for movement
        history.latest_pages(site)            # the previous sample, for changes

Touches: nothing.
"""

import typing

import auditor._lazy as _lazy

if typing.TYPE_CHECKING:
    from auditor.history.copy import CopySummary, copy_history
    from auditor.history.db import MIGRATIONS, default_db_path
    from auditor.history.records import (
        DEFAULT_RECHECK_DAYS,
        DUE_TOLERANCE,
        DUE_TOLERANCE_SHARE,
        RunRecord,
        SiteRecord,
    )
    from auditor.history.state import decode_state, encode_state
    from auditor.history.store import History

_EXPORTS = {
    "CopySummary": "auditor.history.copy",
    "copy_history": "auditor.history.copy",
    "MIGRATIONS": "auditor.history.db",
    "default_db_path": "auditor.history.db",
    "DEFAULT_RECHECK_DAYS": "auditor.history.records",
    "DUE_TOLERANCE": "auditor.history.records",
    "DUE_TOLERANCE_SHARE": "auditor.history.records",
    "RunRecord": "auditor.history.records",
    "SiteRecord": "auditor.history.records",
    "decode_state": "auditor.history.state",
    "encode_state": "auditor.history.state",
    "History": "auditor.history.store",
}
__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DEFAULT_RECHECK_DAYS",
    "DUE_TOLERANCE",
    "DUE_TOLERANCE_SHARE",
    "MIGRATIONS",
    "CopySummary",
    "History",
    "RunRecord",
    "SiteRecord",
    "copy_history",
    "decode_state",
    "default_db_path",
    "encode_state",
]
