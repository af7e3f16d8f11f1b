"""The command line: the only place that reads argv, prints and exits.

Each command imports what it needs when it runs: every ``--help`` loads no
third-party library, ``auditor walk`` loads the HTTP stack (requests, urllib3)
only for a URL and never numpy, pandas, lxml or matplotlib, and builds only its
own parser (the audit, history and fleet command lines are not even imported).
tests/test_startup_imports.py pins this.

Exit codes (contract): 0 the command did its job, 1 it could not (e.g. no
sitemap readable at all), 2 usage error.

Touches: the network, the database, the disk.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from auditor import __version__
from auditor.cli.args import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    add_http_options,
    add_log_options,
    add_max_files,
    http_options,
    progress_for,
)
from auditor.cli.commands import COMMANDS, line
from auditor.errors import AuditorError, UsageError
from auditor.logs import level_for, logging_to
from auditor.words import counted

if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]

    from auditor.walker import Walk
    from auditor.walker.inventory import Inventory


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of every subcommand; with ``only`` (a command's name), of
    that command's group alone; with ``only=""``, of none: each command listed with its
    line and no options, as ``auditor --help`` shows them.

    ``auditor NAME`` parses with NAME's group alone, and ``auditor --help`` with the
    list alone: the same help, options and errors, without importing the other
    commands' modules.
    """
    parser = argparse.ArgumentParser(
        prog="auditor",
        description="Tell whether a website's sitemap <lastmod> can be trusted for crawl "
        "scheduling.",
    )
    parser.add_argument("--version", action="version", version=f"auditor {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if only == "":
        for name in COMMANDS:
            commands.add_parser(name, help=line(name))
        return parser
    groups = [COMMANDS[only][0]] if only else dict.fromkeys(g for g, _ in COMMANDS.values())
    for group in groups:
        _add_group(group, commands)
    add_log_options(commands)
    return parser


def _add_group(group: str, commands: Commands) -> None:
    """Add ``group``'s commands, importing its module (here, not before)."""
    if group in _HERE:
        _HERE[group](commands)
    elif group == "audit":
        from auditor.cli.audit import add_audit_commands

        add_audit_commands(commands)
    elif group == "plan":
        from auditor.cli.plan import add_plan_commands

        add_plan_commands(commands)
    elif group == "coverage":
        from auditor.cli.coverage import add_coverage_command

        add_coverage_command(commands)
    elif group == "db":
        from auditor.cli.db import add_db_commands

        add_db_commands(commands)
    else:
        from auditor.cli.serve import add_serve_command

        add_serve_command(commands)


def _add_walk(commands: Commands) -> None:
    walk = commands.add_parser(
        "walk",
        help=line("walk"),
        description="Find and read every sitemap of TARGET and write one record per unique URL.",
    )
    walk.add_argument("target", metavar="TARGET", help="site origin, sitemap URL or local file")
    walk.add_argument(
        "--format",
        choices=("jsonl", "csv"),
        default="jsonl",
        help="jsonl: one URL a JSON object a line; csv: a header, then one URL a row "
        "(default jsonl)",
    )
    walk.add_argument(
        "--extensions",
        action="store_true",
        help="CSV: add the sitemap extension columns (hreflang, images, video, news); "
        "JSONL carries them wherever an entry has them",
    )
    walk.add_argument(
        "--problems",
        metavar="FILE",
        help="write one JSON object per problem to FILE (- for stderr)",
    )
    add_max_files(walk)
    add_http_options(walk)
    walk.set_defaults(handler=_cmd_walk)


def _add_inspect(commands: Commands) -> None:
    inspect = commands.add_parser(
        "inspect",
        help=line("inspect"),
        description="Walk TARGET and analyse its lastmod values per site and per "
        "sub-sitemap: shared and generation-time stamps, missing, invalid and future dates.",
    )
    inspect.add_argument("target", metavar="TARGET", help="site origin, sitemap URL or local file")
    inspect.add_argument("--json", action="store_true", help="print the analysis as JSON")
    inspect.add_argument(
        "--previous",
        metavar="FILE",
        help="an earlier `auditor walk` output (JSONL or CSV) of the same target: also "
        "report which lastmod values moved since",
    )
    add_max_files(inspect)
    add_http_options(inspect)
    inspect.set_defaults(handler=_cmd_inspect)


def _cmd_walk(args: argparse.Namespace) -> int:
    from auditor.schemes import settled
    from auditor.walker.discovery import classify_target
    from auditor.walker.output import write_csv, write_walk_jsonl
    from auditor.walker.walk import Walk
    from auditor.walkoptions import WalkOptions

    options = WalkOptions(
        http=http_options(args),
        max_files=args.max_files,
    )
    target = settled(classify_target(args.target), options.http, _say(args))
    progress = progress_for(args)
    walk = Walk(target, options, on_progress=progress.walk)
    out = sys.stdout
    try:
        if args.format == "csv":
            write_csv(walk, out, extensions=args.extensions)
        else:
            write_walk_jsonl(walk, out)
        out.flush()
    finally:
        progress.clear()
        if args.problems:
            _write_problems(walk, args.problems)
    _summary(walk, quiet=args.quiet)
    return EXIT_OK if walk.readable else EXIT_FAILED


def _cmd_inspect(args: argparse.Namespace) -> int:
    from auditor.inspection import inspect_target
    from auditor.schemes import settled
    from auditor.terminal import (
        extension_lines,
        inspect_summary,
        inspect_table,
        problem_lines,
        search_console_lines,
    )
    from auditor.walker.discovery import classify_target
    from auditor.walker.inventory import read_entries_file
    from auditor.walkoptions import WalkOptions

    options = WalkOptions(
        http=http_options(args),
        max_files=args.max_files,
    )
    previous = read_entries_file(args.previous) if args.previous else None
    target = settled(classify_target(args.target), options.http, _say(args))
    progress = progress_for(args)
    try:
        found = inspect_target(target, options, previous=previous, on_progress=progress.walk)
    finally:
        progress.clear()
    inventory = found.inventory
    if args.json:
        json.dump(found.to_dict(), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print(inspect_table(found.dispersion))
        for line in [
            *extension_lines(found),
            *search_console_lines(inventory.problems),
            *problem_lines(inventory.problems),
        ]:
            print(line)
        print(inspect_summary(found.dispersion, len(inventory.files), len(inventory.problems)))
    if not inventory.readable:
        print(f"auditor: {_why_unread(inventory, target.site)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _say(args: argparse.Namespace) -> Callable[[str], None]:
    """A notice on stderr (``auditor: ...``), unless -q."""

    def say(message: str) -> None:
        if not args.quiet:
            print(f"auditor: {message}", file=sys.stderr)

    return say


def _why_unread(walked: Inventory | Walk, site: str | None) -> str:
    """Why a walk of ``site`` (None: a local file) read no sitemap: the target never
    reached (in plain words), or no sitemap readable on a site that answered."""
    from auditor.schemes import no_tls_hint
    from auditor.walker.reach import unreached

    cause = unreached(walked.robots, walked.files, walked.problems) if site else None
    if not site or not cause:
        return "no sitemap could be read"
    return f"could not reach {site}: {no_tls_hint(site, cause)}"


def _write_problems(walk: Walk, path: str) -> None:
    lines = "".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in walk.problems)
    if path == "-":
        sys.stderr.write(lines)
        return
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(lines)


def _summary(walk: Walk, *, quiet: bool) -> None:
    """The walk's one line on stderr (under -q, only its failure)."""
    if quiet:
        if not walk.readable:
            print(f"auditor: {_why_unread(walk, walk.site)}", file=sys.stderr)
        return
    readable = sum(f.readable for f in walk.files)
    line = (
        f"auditor: {counted(walk.urls, 'URL')} from {readable:,} of "
        f"{counted(len(walk.files), 'sitemap file')}, {counted(len(walk.problems), 'problem')}"
    )
    if not walk.readable:
        line += f" ({_why_unread(walk, walk.site)})"
    print(line, file=sys.stderr)


def _add_page_command(commands: Commands) -> None:
    page = commands.add_parser(
        "page",
        help=line("page"),
        description="Fetch one page (or read a saved one) and show its dateModified and "
        "datePublished, HTTP Last-Modified, and content fingerprints.",
    )
    page.add_argument(
        "target", metavar="TARGET", help="page URL or local HTML file (gzip'd or not)"
    )
    page.add_argument("--json", action="store_true", help="print the evidence as one JSON object")
    page.add_argument("--rdfa", action="store_true", help="also read RDFa (slow)")
    add_http_options(page)
    page.set_defaults(handler=_cmd_page)


def _cmd_page(args: argparse.Namespace) -> int:
    from auditor.evidence import read_page_file
    from auditor.evidence.summary import summarize
    from auditor.http import PAGE_ACCEPT, HttpClient
    from auditor.sampler.fetch import download_page, evidence_of
    from auditor.schemes import settled
    from auditor.walker.discovery import classify_target

    target = classify_target(args.target)
    if target.kind == "file":
        evidence = read_page_file(Path(target.value), rdfa=args.rdfa)
    else:
        options = http_options(args, accept=PAGE_ACCEPT)
        target = settled(target, options, _say(args))
        url = target.value if target.kind == "url" else target.value + "/"
        with HttpClient(options) as client:
            evidence = evidence_of(download_page(client, url), rdfa=args.rdfa)
    if args.json:
        print(json.dumps(evidence.to_dict(), ensure_ascii=False))
    else:
        print(summarize(evidence))
    return EXIT_OK if evidence.ok else EXIT_FAILED


#: The groups whose commands this module defines.
_HERE: dict[str, Callable[[Commands], None]] = {
    "walk": _add_walk,
    "inspect": _add_inspect,
    "page": _add_page_command,
}


def _needed(words: Sequence[str]) -> str | None:
    """What of the parser ``words`` need (see :func:`build_parser`): the group of the
    command they start with; none of the commands' options when they name no command
    (``--help``, ``--version``, a usage error); else (options before the command) all."""
    if words and words[0] in COMMANDS:
        return words[0]
    return None if any(word in COMMANDS for word in words) else ""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``auditor`` console script (and of ``python -m auditor``).

    Without ``argv`` this is the process's own command line, which ends when it
    returns: what is left is frozen (``gc.freeze``), so that the interpreter's
    shutdown does not walk every object of the imports and the walk once more
    looking for cycles to collect (about 40 ms of a 0.5 s walk of a 50 MB file).
    Objects are still freed and files flushed as usual; only cyclic garbage is
    left to the end of the process. Called with ``argv``, it freezes nothing.
    """
    try:
        return _main(sys.argv[1:] if argv is None else list(argv))
    finally:
        if argv is None:
            gc.freeze()


def _main(words: list[str]) -> int:
    parser = build_parser(_needed(words))
    args = parser.parse_args(words)
    try:
        with logging_to(sys.stderr, level_for(args.verbose, args.quiet)):
            return int(args.handler(args))
    except UsageError as exc:
        print(f"auditor: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except AuditorError as exc:
        print(f"auditor: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        print("auditor: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
