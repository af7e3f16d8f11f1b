"""Reports: a self-contained HTML report per site with PNG charts, a fleet index, exports.

The one door to report files and plots (matplotlib, Agg backend).

Touches: the database, the disk.
"""

from __future__ import annotations

import typing
from pathlib import Path

import auditor._lazy as _lazy

if typing.TYPE_CHECKING:
    from auditor.report.data import ReportData, load_report_data
    from auditor.report.exports import export_tables, neutralise_formulas
    from auditor.report.fleet import write_fleet_index
    from auditor.report.site import site_slug, write_site_report

_EXPORTS = {
    "ReportData": "auditor.report.data",
    "load_report_data": "auditor.report.data",
    "export_tables": "auditor.report.exports",
    "neutralise_formulas": "auditor.report.exports",
    "write_fleet_index": "auditor.report.fleet",
    "site_slug": "auditor.report.site",
    "write_site_report": "auditor.report.site",
}
__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS)

if typing.TYPE_CHECKING:
    from auditor.history import History

__all__ = [
    "DEFAULT_REPORTS_DIR",
    "DEMO_DIR",
    "EXPORT_FORMATS",
    "ReportData",
    "export_tables",
    "load_report_data",
    "neutralise_formulas",
    "refresh_fleet_index",
    "site_slug",
    "write_fleet_index",
    "write_report",
    "write_site_report",
]

#: Where reports land by default (relative to the working directory).
DEFAULT_REPORTS_DIR = Path("reports")
#: Where ``auditor demo`` writes its reports, fleet index and history.
DEMO_DIR = DEFAULT_REPORTS_DIR / "demo"
#: Formats of ``auditor export``: JSON Lines named ``jsonl`` as in every other command
#: (``json``, its former name, is still taken by ``export_tables``).
EXPORT_FORMATS = ("csv", "parquet", "jsonl")


def write_report(history: History, site: str, folder: Path = DEFAULT_REPORTS_DIR) -> Path:
    """Write ``site``'s report into ``folder/<site>/`` and refresh the fleet index in
    ``folder``; returns the site report's path."""
    from auditor.report.data import load_report_data
    from auditor.report.site import site_slug, write_site_report

    path = write_site_report(load_report_data(history, site), folder / site_slug(site))
    refresh_fleet_index(history, folder)
    return path


def refresh_fleet_index(history: History, folder: Path) -> Path:
    """The fleet index of ``folder``, linking every site whose report is there."""
    from auditor.report.fleet import write_fleet_index
    from auditor.report.site import site_slug

    slugs = {
        record.origin: site_slug(record.origin)
        for record in history.sites()
        if (folder / site_slug(record.origin) / "index.html").is_file()
    }
    return write_fleet_index(history, folder, slugs)
