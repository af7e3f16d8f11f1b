"""The server's report cache outlives a drawing process that died: the next report is
drawn in a new pool, as a fleet's report writer does."""

from __future__ import annotations

import time

from auditor.report.site import site_slug
from auditor.serve.readers import Readers
from auditor.serve.reports import ReportCache
from tests.serve.conftest import Audited


def test_a_report_is_drawn_after_a_drawing_process_died(audited: Audited, tmp_path):
    readers = Readers(str(audited.database))
    cache = ReportCache(readers, tmp_path, drawers=1)
    try:
        first = audited.origins["frozen"]
        assert cache.file(first, site_slug(first)).is_file()
        assert cache._pool is not None
        for process in list(cache._pool._processes.values()):  # a crash, as the OOM killer's
            process.kill()
            process.join(timeout=30)
        time.sleep(0.5)  # the pool notices its worker is gone
        second = audited.origins["mixed"]
        assert cache.file(second, site_slug(second)).is_file()
        assert cache.drawn == 2
    finally:
        cache.close()
        readers.close()
