"""The command line of crawl batches: ``auditor crawled --take-back`` and
``auditor crawled --batches`` (registered with ``crawled`` in :mod:`auditor.cli.plan`).

Part of the CLI layer with :mod:`auditor.cli` (the only modules that read argv,
print and exit).

Touches: the database.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from auditor.cli.args import EXIT_OK

if TYPE_CHECKING:
    from auditor.history.batches import CrawlBatch

__all__ = ["list_batches", "said_batch", "source_names", "take_back"]


def source_names(sources: Sequence[str]) -> list[str]:
    """The logs a batch names: each file as given, stdin as ``stdin``."""
    return ["stdin" if source == "-" else source for source in sources]


def said_batch(batch_id: int) -> str:
    """The line that tells a recording's batch and how to take it back."""
    return f"batch {batch_id} (to take it back: auditor crawled --take-back {batch_id})"


def take_back(args: argparse.Namespace) -> int:
    """``auditor crawled --take-back ID ...``: the batches removed, newest first, or a
    usage error naming why not (nothing removed)."""
    from auditor.history import History

    with History.open(args.db) as history:
        done = history.take_back(args.take_back)
    if args.json:
        figures = {"taken_back": list(done.batches), "fetches": done.fetches,
                   "restored": done.restored, "removed": done.removed}  # fmt: skip
        print(json.dumps(figures, indent=2))
        return EXIT_OK
    named = ", ".join(map(str, done.batches))
    noun = "batch" if len(done.batches) == 1 else "batches"
    print(
        f"took back {noun} {named}: {done.fetches:,} fetches removed from the crawl log, "
        f"{done.restored:,} URLs' records restored as they were before, {done.removed:,} "
        "URLs first fetched by them forgotten"
    )
    return EXIT_OK


def list_batches(args: argparse.Namespace) -> int:
    """``auditor crawled --batches``: every batch, oldest first."""
    from auditor.history import History
    from auditor.terminal import render_table

    with History.open(args.db) as history:
        found = history.crawl_batches()
    if args.json:
        print(json.dumps([b.to_dict() for b in found], ensure_ascii=False, indent=2))
    elif not found:
        print("auditor: no crawl batch in the history yet")
    else:
        headers = ("batch", "recorded", "fetches", "changed", "unchanged", "status", "sources")
        rows = [
            [str(b.id), _when(b.recorded_at), f"{b.fetches:,}", f"{b.changed:,}",
             f"{b.unchanged:,}", _status(b), ", ".join(b.sources) or "-"]
            for b in found
        ]  # fmt: skip
        print(render_table(headers, rows, right={0, 2, 3, 4}))
    return EXIT_OK


def _when(moment: datetime | None) -> str:
    return "-" if moment is None else moment.isoformat()[:19].replace("T", " ")


def _status(batch: CrawlBatch) -> str:
    if batch.taken_back_at is not None:
        return f"taken back {_when(batch.taken_back_at)}"
    if batch.replaced_dropped_at is not None:
        return "kept for good"
    return "kept"
