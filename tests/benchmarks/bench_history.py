"""History: url_state of a 1,000,000-URL site, and saving runs that carry it.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_history.py

Builds an inventory like a real large site (20 sub-sitemaps, URLs with slugs, lastmod
to the second or the microsecond over a year, one URL in ten undated), then, best of
``--repeat``: encodes it to the url_state blob, decodes it back (checked equal once),
and saves whole runs into a fresh SQLite file in a temp dir (the transaction alone,
then the whole ``save_run`` with the encoding done before the transaction), and reads
``latest_entries`` back. Prints seconds, bytes per URL and the blob size.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.history import History, decode_state, encode_state
from tests.history.helpers import files, pages, result


def inventory(n: int, seed: int = 1) -> pd.DataFrame:
    """An entries-like frame of ``n`` URLs (the columns url_state keeps)."""
    rng = np.random.default_rng(seed)
    sitemap = rng.integers(0, 20, size=n)
    words = np.array(["news", "sport", "culture", "city", "world", "tech", "health", "money"])
    slugs = words[rng.integers(0, len(words), size=n)]
    locs = [
        f"https://www.example.com/{s}/2026/{i:07d}-a-title-of-some-length.html"
        for i, s in enumerate(slugs)
    ]
    start = np.datetime64("2025-11-29T00:00:00", "us").astype(np.int64)
    micros = start + rng.integers(0, 365 * 86_400 * 10**6, size=n)
    whole = rng.random(n) < 0.7  # most generators write whole seconds
    micros[whole] -= micros[whole] % 1_000_000
    lastmod = pd.Series(micros.view("datetime64[us]")).dt.tz_localize("UTC")
    lastmod[rng.random(n) < 0.1] = pd.NaT
    precision = np.where(whole, "second", "fraction").astype(object)
    precision[lastmod.isna().to_numpy()] = None
    names = [f"https://www.example.com/sitemap-{i}.xml" for i in range(20)]
    return pd.DataFrame(
        {
            "loc": pd.Series(locs, dtype=object),
            "lastmod": lastmod,
            "lastmod_precision": pd.Categorical(precision, categories=["second", "fraction"]),
            "sitemap": pd.Categorical.from_codes(sitemap, names),
        }
    )


def _best(repeat: int, function, *args):  # type: ignore[no-untyped-def]
    times, value = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        value = function(*args)
        times.append(time.perf_counter() - started)
    return value, min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    frame = inventory(args.urls)
    blob, encode = _best(args.repeat, encode_state, frame)
    back, decode = _best(args.repeat, decode_state, blob)
    pd.testing.assert_frame_equal(back, frame)
    raw = sum(len(s.encode()) + 1 for s in frame["loc"]) + 8 * len(frame)
    print(f"{args.urls:,} URLs, best of {args.repeat}")
    print(f"encode {encode:.3f} s, decode {decode:.3f} s")
    print(f"blob {len(blob):,} bytes ({len(blob) / args.urls:.1f} B/URL; locs+int64 {raw:,})")
    with tempfile.TemporaryDirectory() as folder, History.open(Path(folder) / "h.sqlite3") as h:
        site = "https://www.example.com"
        times = []
        for i in range(args.repeat):
            run = replace(result(site), started_at=datetime.now(UTC) + timedelta(seconds=i))
            started = time.perf_counter()
            h.save_run(run, files=files(site), entries=frame, pages=pages(site))
            times.append(time.perf_counter() - started)
        _, read = _best(args.repeat, h.latest_entries, site)
        h.close()  # checkpoints the WAL into the file
        size = h.path.stat().st_size
    print(
        f"save_run {min(times):.3f} s, of which encoding {encode:.3f} s before the transaction"
        f" (so the write lock is held ~{min(times) - encode:.3f} s); latest_entries {read:.3f} s"
    )
    print(f"database after {args.repeat} runs: {size:,} bytes (one url_state kept)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
