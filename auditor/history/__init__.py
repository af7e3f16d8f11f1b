"""History: past audits in a SQLite file, the one door to the database.

No other module imports sqlite3. ::

    with History.open() as history:          # --db PATH, else AUDITOR_DB, else the default
        run_id = history.save_run(result, files=files, entries=entries, pages=pages)
        history.latest_entries(site)          # the previous inventory, for movement
        history.latest_pages(site)            # the previous sample, for changes
"""

import typing

import auditor._lazy as _lazy

if typing.TYPE_CHECKING:
    from auditor.history.db import MIGRATIONS, default_db_path
    from auditor.history.records import DEFAULT_RECHECK_DAYS, RunRecord, SiteRecord
    from auditor.history.state import decode_state, encode_state
    from auditor.history.store import History

_EXPORTS = {
    "MIGRATIONS": "auditor.history.db",
    "default_db_path": "auditor.history.db",
    "DEFAULT_RECHECK_DAYS": "auditor.history.records",
    "RunRecord": "auditor.history.records",
    "SiteRecord": "auditor.history.records",
    "decode_state": "auditor.history.state",
    "encode_state": "auditor.history.state",
    "History": "auditor.history.store",
}
__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DEFAULT_RECHECK_DAYS",
    "MIGRATIONS",
    "History",
    "RunRecord",
    "SiteRecord",
    "decode_state",
    "default_db_path",
    "encode_state",
]
