"""The command line of crawl plans and the crawl log: plan, crawled (its batches taken
back and listed: :mod:`auditor.cli.batches`).

Part of the CLI layer with :mod:`auditor.cli` (the only modules that read argv,
print and exit).

Touches: the network, the database, the disk.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, BinaryIO

from auditor.cli.args import (
    EXIT_FAILED,
    EXIT_OK,
    add_db_option,
    add_http_options,
    add_max_files,
    http_options,
    no_site_listed,
    positive_float,
    positive_int,
)
from auditor.cli.commands import line
from auditor.errors import UsageError

if TYPE_CHECKING:
    from auditor.crawl.record import CrawlSummary
    from auditor.crawl.records import FetchRecord, LogProblem
    from auditor.history import History
    from auditor.planner import PlannedFetch
    from auditor.planner.robots import Disallowed

__all__ = ["add_plan_commands", "log_records", "open_log"]

PLAN_COLUMNS = (
    "url", "site", "sitemap", "due_at", "reason", "priority", "p_changed", "lastmod", "verdict"
)  # fmt: skip


def add_plan_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register plan and crawled."""
    plan = commands.add_parser(
        "plan",
        help=line("plan"),
        description="List the fetches due within --horizon for SITE (default: every site in "
        "the history): on trusted sub-sitemaps the URLs whose lastmod advanced since the "
        "crawler's last fetch, new URLs and a few verification fetches; elsewhere the pages "
        "due by their estimated change rate. The sitemaps are walked again first, "
        "conditionally (a 304 for an unchanged file). At most --budget fetches a day per host.",
    )
    plan.add_argument("site", nargs="*", metavar="SITE", help="site origin (default: all)")
    plan.add_argument(
        "--sites",
        action="append",
        default=[],
        metavar="FILE",
        help="a crawl list: one site a line, # comments, - for stdin (may be repeated)",
    )
    plan.add_argument(
        "--budget",
        type=positive_int,
        metavar="N",
        help="fetches a day per host name at most (default: half of what one request "
        "every second, or every Crawl-delay when longer, allows: 43,200)",
    )
    plan.add_argument(
        "--horizon",
        type=positive_float,
        default=1.0,
        metavar="DAYS",
        help="list the fetches due within this many days (default 1)",
    )
    plan.add_argument(
        "--format",
        choices=("jsonl", "csv", "text"),
        default="jsonl",
        help="jsonl: one fetch a JSON object a line; csv: the same columns, one fetch a "
        "row; text: the URLs alone, a crawler's seed list (default jsonl)",
    )
    plan.add_argument(
        "--no-walk",
        action="store_true",
        help="plan on the stored walks: no request (new lastmods are not seen)",
    )
    add_db_option(plan)
    add_max_files(plan)
    add_http_options(plan)
    plan.set_defaults(handler=_cmd_plan)

    crawled = commands.add_parser(
        "crawled",
        help=line("crawled"),
        description="Read the crawler's fetches (JSON Lines or CSV rows of url, fetched_at, "
        "status and an optional content hash; or WARC files, bodies included) and record "
        "them: each URL's last fetch for plans, and what each fetch shows of lastmod for "
        "the next audit's verdict. Malformed lines are named and skipped. Each recording is "
        "a batch with an id, which --take-back removes again.",
    )
    action = crawled.add_mutually_exclusive_group(required=True)
    action.add_argument(
        "--from",
        dest="sources",
        action="extend",
        nargs="+",
        metavar="FILE",
        help="the crawl log (- for stdin); several files (a crawler's WARCs) are read in turn",
    )
    action.add_argument(
        "--take-back",
        dest="take_back",
        action="extend",
        nargs="+",
        type=positive_int,
        metavar="BATCH",
        help="remove batches recorded earlier (their ids, printed when recorded): their "
        "fetches, and what they changed of each URL's record, as if never fed",
    )
    action.add_argument(
        "--batches", action="store_true", help="list the batches recorded, newest last"
    )
    crawled.add_argument(
        "--format",
        choices=("jsonl", "csv", "warc"),
        help="the log's format (default: by the file's name; jsonl for stdin)",
    )
    crawled.add_argument(
        "--backfill",
        action="store_true",
        help="a WARC holding the site's sitemap captures too: date each page capture against "
        "the newest sitemap captured before it (the file is read twice; not stdin)",
    )
    crawled.add_argument("--json", action="store_true", help="print the outcome as JSON")
    add_db_option(crawled)
    crawled.set_defaults(handler=_cmd_crawled)


def _cmd_plan(args: argparse.Namespace) -> int:
    from auditor.fleet import crawl_list
    from auditor.history import History
    from auditor.planner import plan
    from auditor.walker import WalkOptions

    found = crawl_list(args.site, args.sites) if args.site or args.sites else None
    if found is not None and not found.sites:
        raise no_site_listed("plan", args.sites)
    options = WalkOptions(http=http_options(args), max_files=args.max_files)
    counts: Counter[tuple[str, str]] = Counter()
    robots: dict[str, Disallowed] = {}
    with History.open(args.db) as history:
        sites = None
        if found is not None:  # every site in the history read only to name those given
            known = {record.origin for record in history.sites()}
            sites = found.known_as(known)
            unknown = [s for s in sites if s not in known]
            if unknown:
                raise UsageError(f"not in the history (audit it first): {', '.join(unknown)}")
        fetches = plan(
            history,
            sites,
            budget=args.budget,
            horizon_days=args.horizon,
            walk=not args.no_walk,
            walk_options=options,
            on_robots=lambda found: robots.__setitem__(found.site, found),
        )
        _write_plan(fetches, args.format, counts)
    if not args.quiet:
        _plan_summary(counts, robots)
    return EXIT_OK


def _write_plan(
    fetches: Iterable[PlannedFetch], form: str, counts: Counter[tuple[str, str]]
) -> None:
    """Write the plan as it streams (:mod:`auditor.planner.lines`: the text of each
    fetch's ``to_dict``), counting its fetches by site and reason."""
    from auditor.planner.lines import csv_rows, json_lines

    out = sys.stdout
    counted = _counted(fetches, counts)
    if form == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(PLAN_COLUMNS)
        writer.writerows(csv_rows(counted))
    else:
        lines = (f.url for f in counted) if form == "text" else json_lines(counted)
        batch: list[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) == _BATCH:
                out.write("\n".join(batch) + "\n")
                batch.clear()
        if batch:
            out.write("\n".join(batch) + "\n")
    out.flush()


#: Lines written to stdout at a time.
_BATCH = 1_000


def _counted(
    fetches: Iterable[PlannedFetch], counts: Counter[tuple[str, str]]
) -> Iterator[PlannedFetch]:
    for fetch in fetches:
        counts[(fetch.site, fetch.reason)] += 1
        yield fetch


def _plan_summary(counts: Counter[tuple[str, str]], robots: Mapping[str, Disallowed]) -> None:
    """The plan in plain English on stderr: fetches by site and reason, and the URLs
    robots.txt kept out."""
    from auditor.planner.robots import Disallowed

    sites = sorted({site for site, _ in counts} | set(robots))
    total = sum(counts.values())
    noun = "site" if len(sites) == 1 else "sites"
    head = f"auditor: {total:,} fetches planned on {len(sites)} {noun}"
    disallowed = sum(found.urls for found in robots.values())
    if disallowed and len(sites) > 1:
        head += f"; {Disallowed('', disallowed, 'parsed', '').sentence()}"
    print(head, file=sys.stderr)
    for site in sites:
        mine = {reason: n for (s, reason), n in counts.items() if s == site}
        parts = ", ".join(f"{reason} {n:,}" for reason, n in sorted(mine.items()))
        line = f"  {site}: {sum(mine.values()):,}" + (f" ({parts})" if parts else "")
        said = robots[site].sentence() if site in robots else ""
        print(line + (f"; {said}" if said else ""), file=sys.stderr)


def _cmd_crawled(args: argparse.Namespace) -> int:
    from auditor.cli.batches import list_batches, take_back

    if args.sources is None and (args.format or args.backfill):
        raise UsageError("--format and --backfill go with --from")
    if args.take_back:
        return take_back(args)
    if args.batches:
        return list_batches(args)
    return _record(args)


def _record(args: argparse.Namespace) -> int:
    from auditor.cli.batches import source_names
    from auditor.crawl.record import record_fetches
    from auditor.history import History

    sources = [(source, _log_format(source, args.format)) for source in args.sources]
    named = source_names(args.sources)
    problems: Counter[str] = Counter()
    if args.backfill:
        if len(sources) > 1 or sources[0][1] != "warc" or sources[0][0] == "-":
            raise UsageError("--backfill reads one WARC file (twice): give --from FILE.warc")
        with History.open(args.db) as history:
            summary = _backfill(history, sources[0][0], problems, quiet=args.quiet)
    else:
        with History.open(args.db) as history:
            records = _every_record(sources, problems, quiet=args.quiet)
            summary = record_fetches(history, records, now=datetime.now(UTC), sources=named)
    malformed = sum(problems.values())
    result = {**summary.to_dict(), "malformed": malformed, "problems": dict(problems)}
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print("\n".join(_crawled_lines(summary, malformed)))
    return EXIT_OK if summary.recorded or not malformed else EXIT_FAILED


def _crawled_lines(summary: CrawlSummary, malformed: int) -> list[str]:
    """What ``auditor crawled`` did, in plain English: the counts, the fetches waiting
    for a walk, and each site whose hashes were refused."""
    fetches = "fetch" if summary.recorded == 1 else "fetches"
    sites = "site" if len(summary.sites) == 1 else "sites"
    walls = "a bot wall" if summary.blocked == 1 else "bot walls"
    refused = (
        f"{summary.refused:,} compared on noisy hashes, not counted, " if summary.refused else ""
    )
    lines = [
        f"recorded {summary.recorded:,} {fetches} of {len(summary.sites):,} {sites} "
        f"({summary.changed:,} changed, {summary.unchanged:,} unchanged, {refused}"
        f"{summary.unknown_change:,} not comparable, {summary.failed:,} failed"
        f"{f', {summary.blocked:,} of them {walls}' if summary.blocked else ''}); "
        f"{summary.unknown_site:,} of no audited site ignored, "
        f"{summary.already_recorded:,} already recorded, {malformed:,} malformed"
    ]
    if summary.pending:
        wait, them = ("waits", "it") if summary.pending == 1 else ("wait", "them")
        lines.append(
            f"{summary.pending:,} of the compared fetches {wait} for a walk of the sitemaps "
            f"made after {them} (the next plan or audit) to be weighed against lastmod"
        )
    lines += [f"{site}: {noise.sentence()}" for site, noise in sorted(summary.noisy.items())]
    if summary.batch_id is not None:
        from auditor.cli.batches import said_batch

        lines.append(said_batch(summary.batch_id))
    return lines


def _backfill(
    history: History, source: str, problems: Counter[str], *, quiet: bool
) -> CrawlSummary:
    from auditor.crawl.backfill import backfill

    named = _naming(problems, "record", quiet=quiet)
    summary, captures = backfill(
        history,
        lambda: open_log(source),
        now=datetime.now(UTC),
        on_problem=named,
        sources=[source],
    )
    if not quiet:
        print(
            f"auditor: {captures.files:,} sitemap captures listing {len(captures.listings):,} URLs",
            file=sys.stderr,
        )
    return summary


def _log_format(source: str, given: str | None) -> str:
    from auditor.crawl.logfile import detect_format

    form = given or ("jsonl" if source == "-" else detect_format(source))
    if form is None:
        raise UsageError(f"{source}: say its format with --format jsonl|csv|warc")
    return form


def _every_record(
    sources: list[tuple[str, str]], problems: Counter[str], *, quiet: bool
) -> Iterator[FetchRecord]:
    """The records of each log in turn (each opened as it is reached, closed after);
    with several, a problem names its file."""
    for source, form in sources:
        stream = open_log(source)
        kind = "record" if form == "warc" else "line"  # a WARC's records are no lines
        unit = f"{source}: {kind}" if len(sources) > 1 else kind
        try:
            yield from log_records(stream, form, problems, quiet=quiet, unit=unit)
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()


def open_log(source: str) -> BinaryIO:
    """The crawl log to read: a file opened, or stdin's bytes for ``-``."""
    if source == "-":
        return sys.stdin.buffer
    try:
        return open(source, "rb")
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror}") from exc


def log_records(
    stream: BinaryIO, form: str, problems: Counter[str], *, quiet: bool, unit: str = "line"
) -> Iterable[FetchRecord]:
    """The log's records; each malformed line is named on stderr as it is met."""
    from auditor.crawl.logfile import read_crawl_log
    from auditor.crawl.records import FetchRecord

    named = _naming(problems, unit, quiet=quiet)
    for item in read_crawl_log(stream, form):
        if isinstance(item, FetchRecord):
            yield item
        else:
            named(item)


def _naming(problems: Counter[str], unit: str, *, quiet: bool) -> Callable[[LogProblem], None]:
    """Counts each problem of a log by code and names it on stderr (``line 12: ...``,
    ``record 3: ...``) as it is met."""

    def named(problem: LogProblem) -> None:
        problems[problem.code] += 1
        if not quiet:
            where = f"{unit} {problem.line}"
            print(f"auditor: {where}: {problem.code}: {problem.detail}", file=sys.stderr)

    return named
