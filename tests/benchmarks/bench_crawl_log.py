"""Crawl log reading: throughput and peak memory over big JSON Lines, CSV and WARC logs.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_crawl_log.py [--lines N] [--warc-mb M]

Writes into a temporary folder, then reads each file in a fresh process (so that the peak
RSS is the reader's own, not the writer's) with :func:`auditor.crawl.logfile.read_crawl_log`:

- ``jsonl``: 1,000,000 lines (ISO times with ``Z``, an offset or none, epoch seconds;
  statuses with gaps; a content hash on half), one bad line in 10,000;
- ``csv``: the same rows as CSV;
- ``warc``: about 1 GB written by warcio's own ``WARCWriter``, uncompressed: responses of
  100 KB of HTML-like text (a request and a revisit beside every tenth), and ten of 50 MB,
  cut at the default 10 MiB body cap;
- ``warc.gz``: the same records, each its own gzip member (warcio writes them at level 9).

Prints per file its size, wall seconds, records/s, MB/s (of the file as stored), the RSS with
the modules imported and nothing read, and the peak RSS (``resource.getrusage``); checks the
counts of fetches, problems and truncated bodies against what was written (exit 1 if not).
"""

from __future__ import annotations

import argparse
import io
import json
import random
import resource
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

_VOCABULARY = 5000  # random words of 2-10 letters: text that compresses about 2:1
_BODY = 100 * 1024
_BIG = 50 * 1024 * 1024
_BIGS = 10


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _when(n: int) -> str | int:
    day, hour, minute = 1 + n % 28, n % 24, n % 60
    forms: list[str | int] = [
        f"2026-09-{day:02d}T{hour:02d}:{minute:02d}:07Z",
        f"2026-09-{day:02d}T{hour:02d}:{minute:02d}:07+02:00",
        f"2026-09-{day:02d} {hour:02d}:{minute:02d}:07",
        1_790_000_000 + n,
    ]
    return forms[n % 4]


def write_lines(folder: Path, lines: int) -> tuple[Path, Path, int]:
    """A JSON Lines and a CSV log of ``lines`` rows each; how many rows are bad."""
    rng = random.Random(7)
    jsonl, csv_path = folder / "crawl.jsonl", folder / "crawl.csv"
    bad = 0
    with jsonl.open("w", encoding="utf-8") as j, csv_path.open("w", encoding="utf-8") as c:
        c.write("url,fetched_at,status,content_hash\n")
        for n in range(lines):
            if n % 10_000 == 9_999:
                bad += 1
                j.write('{"url": "https://www.example.com/broken", "fetched_at": \n')
                c.write("https://www.example.com/broken,not a time,200,\n")
                continue
            url = f"https://www.example.com/section-{n % 97}/article-{n}-{rng.randrange(10**9)}"
            status = (200, 200, 200, 304, 404, None)[n % 6]
            digest = f"{rng.getrandbits(160):040x}" if n % 2 else None
            row = {"url": url, "fetched_at": _when(n), "status": status, "content_hash": digest}
            j.write(json.dumps(row) + "\n")
            c.write(f"{url},{_when(n)},{status or ''},{digest or ''}\n")
    return jsonl, csv_path, bad


def _bodies(total_mb: int) -> Iterator[tuple[int, bytes]]:
    """Each record's number and body: 100 KB ones, and _BIGS of 50 MB spread among them."""
    rng = random.Random(11)
    letters = string.ascii_lowercase
    vocabulary = ["".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(_VOCABULARY)]
    words = " ".join(rng.choices(vocabulary, k=400_000)).encode()
    bigs = _BIGS if total_mb >= 1000 else 0
    count = max(1, (total_mb * 1024 * 1024 - bigs * _BIG) // _BODY)
    step = max(1, count // max(1, bigs))
    for n in range(count):
        size = _BIG if bigs and n % step == step // 2 and n // step < bigs else _BODY
        start = rng.randrange(len(words) - _BODY)
        text = words[start : start + _BODY] * (size // _BODY)
        yield n, b"<html><!-- page %d --><body><p>" % n + text + b"</p></body></html>"


def write_warcs(folder: Path, total_mb: int) -> tuple[Path, Path, int, int]:
    """The WARC, plain and gzip'd per record; how many fetches and truncated bodies it holds."""
    from warcio.warcwriter import WARCWriter

    plain_path, packed_path = folder / "crawl.warc", folder / "crawl.warc.gz"
    fetches = truncated = 0
    with plain_path.open("wb") as plain, packed_path.open("wb") as packed:
        writers = WARCWriter(plain, gzip=False), WARCWriter(packed, gzip=True)
        for n, body in _bodies(total_mb):
            for writer in writers:
                written = _write_fetch(writer, f"https://www.example.com/p/{n}", body, n)
            fetches += written
            truncated += len(body) > 10 * 1024 * 1024
    return plain_path, packed_path, fetches, truncated


def _write_fetch(w: Any, url: str, body: bytes, n: int) -> int:
    """A response, with a request before it and a revisit after it every tenth time."""
    from warcio.statusandheaders import StatusAndHeaders

    http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], "HTTP/1.1")
    record = w.create_warc_record(
        url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http
    )
    if n % 10:
        w.write_record(record)
        return 1
    get = StatusAndHeaders("GET / HTTP/1.1", [("Host", "www.example.com")], is_http_request=True)
    w.write_record(w.create_warc_record(url, "request", http_headers=get))
    w.write_record(record)
    digest = record.rec_headers.get_header("WARC-Payload-Digest")
    when = "2026-11-01T00:00:00Z"
    w.write_record(w.create_revisit_record(url, digest, url, when, http_headers=http))
    return 2


def read_one(path: str, fmt: str) -> None:
    """(In the child process.) Read one log and print what it found, as JSON."""
    from auditor.crawl.logfile import read_crawl_log
    from auditor.crawl.records import FetchRecord

    imported = _rss_mb()
    fetches = problems = truncated = 0
    started = time.perf_counter()
    with open(path, "rb") as stream:
        for item in read_crawl_log(stream, fmt):
            if isinstance(item, FetchRecord):
                fetches += 1
                truncated += item.truncated
            else:
                problems += 1
    seconds = time.perf_counter() - started
    counts = {"fetches": fetches, "problems": problems, "truncated": truncated}
    print(json.dumps({**counts, "seconds": seconds, "imported": imported, "peak": _rss_mb()}))


def _child(*args: str) -> Any:
    """Run this script with ``args`` in a fresh process; the JSON it prints."""
    command = [sys.executable, __file__, *args]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def write_all(folder: str, lines: int, warc_mb: int) -> None:
    """(In a child process, so that the readers' peak RSS starts from a small parent's:
    Linux keeps ``ru_maxrss`` across fork and exec.) Write the logs; print what they hold."""
    jsonl, csv_path, bad = write_lines(Path(folder), lines)
    plain, packed, fetches, cut = write_warcs(Path(folder), warc_mb)
    in_lines = [lines - bad, bad, 0]
    cases = [[jsonl, "jsonl", in_lines], [csv_path, "csv", in_lines]]
    cases += [[plain, "warc", [fetches, 0, cut]], [packed, "warc", [fetches, 0, cut]]]
    print(json.dumps([[str(path), fmt, expected] for path, fmt, expected in cases]))


def main() -> int:
    """Write the logs, read each in a child process, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--warc-mb", type=int, default=1024)
    parser.add_argument("--read", nargs=2, metavar=("PATH", "FORMAT"), help=argparse.SUPPRESS)
    parser.add_argument("--write", metavar="FOLDER", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.read:
        read_one(*args.read)
        return 0
    if args.write:
        write_all(args.write, args.lines, args.warc_mb)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-crawl-log-") as folder:
        started = time.perf_counter()
        sizes = ["--lines", str(args.lines), "--warc-mb", str(args.warc_mb)]
        cases = _child("--write", folder, *sizes)
        print(f"written in {time.perf_counter() - started:.0f} s", flush=True)
        return _report([(Path(path), fmt, tuple(expected)) for path, fmt, expected in cases])


def _report(cases: list[tuple[Path, str, tuple[int, int, int]]]) -> int:
    print(
        "| file | size MB | records | problems | truncated | wall s | records/s | MB/s "
        "| RSS imported MB | peak RSS MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    failed = False
    for path, fmt, expected in cases:
        r = _child("--read", str(path), fmt)
        size = path.stat().st_size / 1e6
        got = (int(r["fetches"]), int(r["problems"]), int(r["truncated"]))
        failed |= got != expected
        mark = "" if got == expected else f" (expected {expected})"
        print(
            f"| {path.name} | {size:,.0f} | {got[0]:,} | {got[1]:,} | {got[2]:,}{mark} "
            f"| {r['seconds']:.1f} | {got[0] / r['seconds']:,.0f} | {size / r['seconds']:,.0f} "
            f"| {r['imported']:.0f} | {r['peak']:.0f} |"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
