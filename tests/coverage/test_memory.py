"""A 1,000,000-URL inventory against a 1,000,000-line crawl log in bounded memory.

The history holds one run of a 1,000,000-URL site (the inventory of the history's
benchmarks); the log is JSON Lines: 500,000 fetches of listed URLs (every other one),
400,000 of 200,000 orphans (each twice) and 100,000 of another site. ``auditor
coverage`` runs in a process of its own, which reports its peak RSS; the same command on
a 10-URL site is the baseline (interpreter, imports, the history).

The bound, 128 MB above the baseline, is what the design costs with room to spare and
less than either way of holding too much: the inventory kept as sorted 64-bit hashes with
a sub-sitemap code, a crawled flag, a last fetch time and finding bits (22 bytes a URL,
about twice that while the hashes are sorted), the url_state blob (11 MB), a batch of locs
and of fetches, 200,000 orphans' hashes (1.6 MB). Measured on a 2-core machine: 85 MB
above a 102 MB baseline, the check 18 s and the whole test 26 s. Holding the log's URLs
(a Python set: about 100 bytes each, 70 MB here and growing with the log) on top of it,
or the inventory as a frame of strings (about 150 MB), would not fit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from auditor.history import History
from tests.history.helpers import STARTED, files, large_inventory, result

SITE = "https://www.example.com"
URLS = 1_000_000
BOUND_MB = 128
#: The command, then its peak RSS in kB on stderr: VmHWM, the high-water mark of this
#: process's own memory (ru_maxrss would carry over the forking test's across exec).
_PEAK = (
    "import re, sys\n"
    "from auditor.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "status = open('/proc/self/status').read()\n"
    "print(re.search(r'VmHWM:\\s+(\\d+)', status)[1], file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def _history(path: Path, urls: int) -> list[str]:
    frame = large_inventory(urls)
    with History.open(str(path)) as history:
        history.save_run(result(SITE, started=STARTED), files=files(SITE), entries=frame, pages=[])
    return [str(loc) for loc in frame["loc"]]


def _log(path: Path, locs: list[str]) -> None:
    at = '", "fetched_at": "2026-12-01T00:00:00Z", "status": 200}\n'
    with path.open("w", encoding="utf-8") as out:
        out.writelines('{"url": "' + loc + at for loc in locs[::2])
        for _ in range(2):
            out.writelines(f'{{"url": "{SITE}/orphan/{i}{at}' for i in range(len(locs) // 5))
        out.writelines(f'{{"url": "https://other.example/{i}{at}' for i in range(len(locs) // 10))


def _peak_mb(db: Path, log: Path) -> tuple[float, dict]:  # type: ignore[type-arg]
    args = ["coverage", SITE, "--db", str(db), "--from", str(log), "--json", "-q"]
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *args], capture_output=True, text=True, check=True
    )
    return int(done.stderr.split()[-1]) / 1024, json.loads(done.stdout)


def test_a_million_urls_against_a_million_line_log_in_bounded_memory(tmp_path: Path) -> None:
    small_db, small_log = tmp_path / "small.sqlite3", tmp_path / "small.jsonl"
    _log(small_log, _history(small_db, 10))
    baseline, _ = _peak_mb(small_db, small_log)
    db, log = tmp_path / "history.sqlite3", tmp_path / "crawl.jsonl"
    _log(log, _history(db, URLS))
    started = time.perf_counter()
    peak, found = _peak_mb(db, log)
    spent = time.perf_counter() - started
    print(
        f"coverage of 1M URLs against 1M lines: {spent:.1f} s,"
        f" peak {peak:.0f} MB, baseline {baseline:.0f} MB"
    )
    assert found["inventory"]["urls"] == URLS
    assert found["crawl"]["listed_crawled"] == URLS // 2
    assert found["totals"]["not-crawled"] == URLS // 2
    assert found["orphans"] == {
        "urls": URLS // 5,
        "exact": True,
        "examples": found["orphans"]["examples"],
    }
    assert len(found["orphans"]["examples"]) == 5
    assert found["crawl"]["other_sites"] == URLS // 10
    assert peak - baseline < BOUND_MB, f"peak {peak:.0f} MB, baseline {baseline:.0f} MB"
