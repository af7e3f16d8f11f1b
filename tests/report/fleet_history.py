"""A real history of many generated sites, for the fleet index at scale.

Run directly to write a history and its index (the 5,000-site measurement):
``python3 -m tests.report.fleet_history 5000 /tmp/fleet``.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from auditor.history import History
from auditor.report import site_slug, write_fleet_index
from tests.history.helpers import STARTED, entries, result

#: A site whose "origin" carries markup: the index must show it as text.
HOSTILE = 'https://evil.example/"><script>alert("site")</script>'
#: Each site's verdicts, oldest first, cycled through the generated sites.
PATTERNS = (
    ("trusted",),
    ("inconclusive", "trusted"),
    ("untrusted",),
    ("trusted", "partial"),
    ("no-lastmod", "no-lastmod"),
    ("inconclusive",),
    ("untrusted", "untrusted", "partial"),
)


def site_name(n: int) -> str:
    """The origin of the n-th generated site."""
    return f"https://site{n:05d}.example"


def write_fleet_history(path: Path, sites: int) -> Counter[str]:
    """Save ``sites`` generated sites (one to three runs each, the hostile one among them)
    into the history at ``path``; the latest verdicts counted."""
    empty = entries()[:0]
    latest: Counter[str] = Counter()
    with History.open(path) as history:
        for n in range(sites):
            site = HOSTILE if n == sites // 2 else site_name(n)
            verdicts = PATTERNS[n % len(PATTERNS)]
            for day, verdict in enumerate(verdicts):
                started = STARTED + timedelta(days=day, seconds=n)
                run = replace(result(site, started=started, verdict=verdict), report=None)
                history.save_run(run, files=[], entries=empty, pages=[])
            latest[verdicts[-1]] += 1
    return latest


def main(sites: int, folder: Path) -> None:
    """Write a history of ``sites`` sites into ``folder`` and its index, every site linked."""
    folder.mkdir(parents=True, exist_ok=True)
    database = folder / "history.sqlite3"
    database.unlink(missing_ok=True)
    write_fleet_history(database, sites)
    with History.open(database) as history:
        slugs = {s.origin: site_slug(s.origin) for s in history.sites()}
        path = write_fleet_index(history, folder, slugs)
    print(f"{path}: {sites:,} sites, {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main(int(sys.argv[1]), Path(sys.argv[2]))
