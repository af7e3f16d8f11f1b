"""The command line of the history database itself: ``auditor db copy`` and
``auditor db upgrade``.

Part of the CLI layer with :mod:`auditor.cli` (the only modules that read argv,
print and exit).

Touches: the database, the disk.
"""

from __future__ import annotations

import argparse

from auditor.cli.args import EXIT_OK, add_db_option, add_log_options, progress_for
from auditor.cli.commands import line
from auditor.words import counted

__all__ = ["add_db_commands"]

_DB_HELP = "a path, sqlite:///PATH or postgresql://user@host:port/dbname"


def add_db_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``db`` and its subcommands."""
    db = commands.add_parser(
        "db",
        help=line("db"),
        description="Work on a history database as a whole.",
    )
    actions = db.add_subparsers(
        dest="db_command", required=True, metavar="ACTION", help="what to do (copy, upgrade)"
    )
    copy = actions.add_parser(
        "copy",
        help="copy a whole history into another database (SQLite <-> PostgreSQL)",
        description="Copy every site, run, sitemap file, sub-sitemap verdict, sampled page "
        "and latest inventory of SRC into DST, in one transaction, then count both table by "
        "table and run by run; any difference and nothing is written. DST must be empty "
        "unless --force is given.",
    )
    copy.add_argument("--from", dest="source", required=True, metavar="SRC", help=_DB_HELP)
    copy.add_argument("--to", dest="target", required=True, metavar="DST", help=_DB_HELP)
    copy.add_argument(
        "--force",
        action="store_true",
        help="replace DST's whole history when it is not empty (in the same transaction)",
    )
    copy.set_defaults(handler=_cmd_copy)
    upgrade = actions.add_parser(
        "upgrade",
        help="apply the migrations this auditor has and the history lacks",
        description="Bring the history up to this auditor's schema: apply, in order, the "
        "named migrations it lacks (each in its own transaction), and say which. Every "
        "command that writes does it too; a reader (auditor serve) never does, and says "
        "to run this. A history made by a newer auditor is refused.",
    )
    add_db_option(upgrade)
    upgrade.set_defaults(handler=_cmd_upgrade)
    add_log_options(actions)


def _cmd_upgrade(args: argparse.Namespace) -> int:
    from auditor.history import History

    with History.open(args.db) as history:
        where, applied = history.location, history.applied
    if applied:
        print(f"{where}: applied {counted(len(applied), 'migration')}: {', '.join(applied)}")
    else:
        print(f"{where}: up to date, nothing to apply")
    return EXIT_OK


def _cmd_copy(args: argparse.Namespace) -> int:
    from auditor.errors import HistoryError
    from auditor.history import History
    from auditor.history.copy import copy_history
    from auditor.history.location import locate

    source_at = locate(args.source)
    if source_at.path is not None and not source_at.path.is_file():
        raise HistoryError(f"--from {source_at}: no such file (nothing was copied)")
    progress = progress_for(args)
    with History.open(args.source) as source, History.open(args.target) as target:
        summary = copy_history(source, target, replace=args.force, on_progress=progress)
    progress.clear()
    rows = ", ".join(f"{table} {count:,}" for table, count in summary.rows.items())
    replaced = f", replacing {counted(summary.replaced, 'run')}" if summary.replaced else ""
    print(
        f"copied {counted(summary.runs, 'run')} of {counted(summary.sites, 'site')} from "
        f"{summary.source} "
        f"to {summary.target}{replaced}; verified ({rows})"
    )
    return EXIT_OK
