"""A synthetic history of a large fleet, written with bulk inserts (not by running audits).

``build(history, sites, runs)`` fills an empty history with ``sites`` sites of ``runs``
weekly runs each, in the proportions a real fleet leaves: per run 20 sampled pages, a
sitemap index with three files below it, two segment verdicts, the stored result JSON
(about 1.8 KB) and its savings; per site its latest inventory (``url_state``) of 100 to 800
URLs. Verdicts come in streaks (a site keeps its verdict for a few runs, then may change),
re-verification intervals of 1, 3.5 and 7 days or none.

Inventory blobs are drawn from a pool of ``POOL`` encoded inventories (the same sizes, the
URLs of one placeholder host): encoding one per site would take 100,000 x 10 ms. What is
timed (decoding them, planning on them) does not depend on the host they name. Sampled
pages carry small text blocks (about 40 bytes, not the 3 KB a real page keeps for the next
comparison: the operations measured never read them).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

from auditor.history import History, encode_state
from auditor.history.records import instant_text
from auditor.history.rows import (
    FILE_COLUMNS,
    PAGE_COLUMNS,
    SEGMENT_COLUMNS,
    file_row,
    page_row,
    segment_row,
    to_json,
)
from tests.history.helpers import STARTED, files, large_inventory, pages, result

PLACEHOLDER = "https://example.com"
VERDICTS = ("trusted", "partial", "untrusted", "no-lastmod", "inconclusive")
RECHECK = (1.0, 3.5, 7.0, None)
PAGES_A_RUN = 20
POOL = 200
#: Sites written per transaction.
CHUNK = 500


def site_name(n: int) -> str:
    """The origin of the n-th generated site."""
    return f"https://site{n:06d}.example"


def _template_rows(per_run: int) -> dict[str, Any]:
    """Rows of one run of the placeholder site, as text to substitute the origin into."""
    base = result(PLACEHOLDER).to_dict()
    templates = pages(PLACEHOLDER)
    sampled = [replace(templates[k % 3], loc=f"{PLACEHOLDER}/p/{k}") for k in range(per_run)]
    return {
        "result": to_json(base),
        "files": [file_row(f) for f in files(PLACEHOLDER)],
        "segments": [segment_row(s) for s in result(PLACEHOLDER).segments],
        "pages": [page_row(p) for p in sampled],
    }


def _sited(row: tuple[Any, ...], origin: str) -> tuple[Any, ...]:
    return tuple(v.replace(PLACEHOLDER, origin) if isinstance(v, str) else v for v in row)


def _savings(rng: random.Random, urls: int) -> str:
    plan = rng.uniform(0.02, 1.0) * urls
    return json.dumps(
        {
            "urls": urls,
            "fetches_per_day": round(plan, 1),
            "freshness": 0.98,
            "uniform_fetches_per_day": float(urls),
            "uniform_freshness": 0.99,
            "saved_share": round(1 - plan / urls, 4),
        }
    )


def _verdicts(rng: random.Random, runs: int) -> list[str]:
    verdict, out = rng.choice(VERDICTS), []
    for _ in range(runs):
        if rng.random() < 0.2:
            verdict = rng.choice(VERDICTS)
        out.append(verdict)
    return out


def pool(size: int = POOL, seed: int = 1) -> list[tuple[int, bytes]]:
    """``size`` encoded inventories of 100 to 800 URLs: (URLs, blob)."""
    rng = random.Random(seed)
    made = []
    for k in range(size):
        urls = rng.randint(100, 800)
        made.append((urls, encode_state(large_inventory(urls, seed=k))))
    return made


class _Chunk:
    """The rows of one chunk of sites, table by table."""

    def __init__(self) -> None:
        self.sites: list[tuple[Any, ...]] = []
        self.runs: list[tuple[Any, ...]] = []
        self.files: list[tuple[Any, ...]] = []
        self.segments: list[tuple[Any, ...]] = []
        self.pages: list[tuple[Any, ...]] = []
        self.state: list[tuple[Any, ...]] = []


def _site_rows(
    chunk: _Chunk, n: int, runs: int, run_id: int, rows: dict[str, Any], blobs: Any
) -> int:
    rng = random.Random(n)
    origin, site_id = site_name(n), n + 1
    chunk.sites.append((site_id, origin, instant_text(STARTED)))
    urls, blob = blobs[n % len(blobs)]
    text = rows["result"].replace(PLACEHOLDER, origin)
    files = [_sited(r, origin) for r in rows["files"]]
    segments = [_sited(r, origin) for r in rows["segments"]]
    sampled = [_sited(r, origin) for r in rows["pages"]]
    blocks = PAGE_COLUMNS.index("fp_blocks")
    for k, verdict in enumerate(_verdicts(rng, runs)):
        started = STARTED + timedelta(days=7 * (k - runs), seconds=rng.randint(0, 86_400))
        recheck = rng.choice(RECHECK)
        run_id += 1
        chunk.runs.append(
            (
                run_id,
                site_id,
                instant_text(started),
                instant_text(started + timedelta(minutes=3)),
                verdict,
                recheck,
                text,
                _savings(rng, urls),
            )
        )
        chunk.files += [(run_id, i, *r) for i, r in enumerate(files)]
        chunk.segments += [(run_id, i, *r) for i, r in enumerate(segments)]
        old = k < runs - 2  # older runs' pages lose their blocks
        for i, r in enumerate(sampled):
            row = (*r[:blocks], None, *r[blocks + 1 :]) if old else r
            chunk.pages.append((run_id, i, *row))
    chunk.state.append((site_id, run_id, urls, blob))
    return run_id


def _chunks(sites: int, runs: int, blobs: Any, per_run: int) -> Iterator[_Chunk]:
    rows = _template_rows(per_run)
    run_id = 0
    for start in range(0, sites, CHUNK):
        chunk = _Chunk()
        for n in range(start, min(start + CHUNK, sites)):
            run_id = _site_rows(chunk, n, runs, run_id, rows, blobs)
        yield chunk


def build(history: History, sites: int, runs: int, per_run: int = PAGES_A_RUN) -> None:
    """Fill the empty ``history`` with ``sites`` sites of ``runs`` runs each, ``per_run``
    sampled pages a run."""
    db = history._db
    blobs = pool()
    run_columns = ("id", "site_id", "started_at", "finished_at", "verdict", "recheck_days",
                   "result", "savings")  # fmt: skip
    for chunk in _chunks(sites, runs, blobs, per_run):
        with db.write():
            db.insert_rows("sites", ("id", "origin", "created_at"), chunk.sites)
            db.insert_rows("runs", run_columns, chunk.runs)
            db.insert_rows("sitemap_files", ("run_id", "position", *FILE_COLUMNS), chunk.files)
            db.insert_rows("segments", ("run_id", "position", *SEGMENT_COLUMNS), chunk.segments)
            db.insert_rows("pages", ("run_id", "position", *PAGE_COLUMNS), chunk.pages)
            db.insert_rows("url_state", ("site_id", "run_id", "urls", "data"), chunk.state)
