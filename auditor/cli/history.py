"""The command line of what the history already knows: ``history`` (the runs kept) and
``changed`` (the recrawl list since a moment). A site is named as :mod:`auditor.schemes`
says (a bare name finds its http origin when only that one is known). Part of the CLI
layer (reads argv, prints, exits).

Touches: the database.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from auditor.cli.args import EXIT_OK

if TYPE_CHECKING:
    from auditor.history import History

__all__ = ["cmd_changed", "cmd_history"]


def _site_named(text: str, history: History) -> str:
    """The site origin ``text`` names in ``history`` (every spelling of a host as one, a
    bare name as :mod:`auditor.schemes` says), or ``text``."""
    from auditor.errors import UsageError
    from auditor.schemes import site_in_history

    try:
        return site_in_history(text, history)
    except UsageError:
        return text


def cmd_history(args: argparse.Namespace) -> int:
    """``auditor history [SITE]``: the runs kept, as a table or JSON."""
    from auditor.history import History

    with History.open(args.db) as history:
        runs = history.runs(_site_named(args.site, history) if args.site else None)
        if args.site and not runs:  # an origin stored as written before host names were one
            runs = history.runs(args.site)
        fed = history.run_crawl_batches(runs[0].site if args.site and runs else None)
        taken = {b.id for b in history.crawl_batches(set().union(*fed.values(), ()))
                 if b.taken_back_at is not None}  # fmt: skip
    rows = [
        {
            "run_id": r.run_id,
            "site": r.site,
            "started_at": r.started_at.isoformat(),
            "finished_at": r.finished_at.isoformat(),
            "verdict": r.verdict,
            "crawl_batches": list(fed.get(r.run_id, ())),
            "crawl_batches_taken_back": [b for b in fed.get(r.run_id, ()) if b in taken],
        }
        for r in runs
    ]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    elif not rows:
        print("auditor: no audit in the history yet")
    else:
        print(_history_table(rows, taken))
    return EXIT_OK


def _history_table(rows: list[dict[str, Any]], taken: set[int]) -> str:
    """The runs as a text table; the crawl batches each weighed, those taken back since
    marked."""
    from auditor.terminal import render_table

    headers = ("run", "site", "started", "verdict", "crawl batches")
    table = [
        [
            str(r["run_id"]),
            str(r["site"]),
            str(r["started_at"])[:19].replace("T", " "),
            str(r["verdict"]),
            ", ".join(f"{b} (taken back)" if b in taken else str(b) for b in r["crawl_batches"])
            or "-",
        ]
        for r in rows
    ]
    return render_table(headers, table, right={0})


def cmd_changed(args: argparse.Namespace) -> int:
    """``auditor changed SITE --since ISO``: the recrawl list, text or JSON Lines."""
    from auditor.changed import recrawl_list
    from auditor.history import History
    from auditor.schemes import site_in_history

    with History.open(args.db) as history:
        site = site_in_history(args.site, history)
        items = recrawl_list(history, site, args.since)
        out = sys.stdout
        for item in items:
            if args.format == "jsonl":
                out.write(json.dumps(item.to_dict(), ensure_ascii=False) + "\n")
            else:
                out.write(item.loc + "\n")
    return EXIT_OK
