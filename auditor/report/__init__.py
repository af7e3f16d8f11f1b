"""Reports: a self-contained HTML report per site with PNG charts, a fleet index, exports.

The one door to report files and plots (matplotlib, Agg backend).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from auditor.report.data import ReportData, load_report_data
from auditor.report.exports import EXPORT_FORMATS, export_tables, neutralise_formulas
from auditor.report.fleet import write_fleet_index
from auditor.report.site import site_slug, write_site_report

if TYPE_CHECKING:
    from auditor.history import History

__all__ = [
    "DEFAULT_REPORTS_DIR",
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


def write_report(history: History, site: str, folder: Path = DEFAULT_REPORTS_DIR) -> Path:
    """Write ``site``'s report into ``folder/<site>/`` and refresh the fleet index in
    ``folder``; returns the site report's path."""
    path = write_site_report(load_report_data(history, site), folder / site_slug(site))
    refresh_fleet_index(history, folder)
    return path


def refresh_fleet_index(history: History, folder: Path) -> Path:
    """The fleet index of ``folder``, linking every site whose report is there."""
    slugs = {
        record.origin: site_slug(record.origin)
        for record in history.sites()
        if (folder / site_slug(record.origin) / "index.html").is_file()
    }
    return write_fleet_index(history, folder, slugs)
