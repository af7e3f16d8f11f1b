"""The command line of audits and their history: audit, reverify, history, changed,
report, export, demo (its own module). Heavy modules are imported by the command that needs them.

Part of the CLI layer with :mod:`auditor.cli` (the only modules that read argv,
print and exit).

Touches: the network, the database, the disk.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from auditor.cli.args import (
    EXIT_FAILED,
    EXIT_OK,
    add_db_option,
    add_http_options,
    add_max_files,
    http_options,
    non_negative_float,
    positive_int,
    progress_for,
    renamed_choice,
)
from auditor.cli.commands import line
from auditor.cli.demo import add_demo_command
from auditor.cli.fleet import add_fleet_options, is_fleet, run_fleet, sites_of
from auditor.cli.history import cmd_changed, cmd_history
from auditor.errors import Unreachable, UsageError
from auditor.http import PAGE_ACCEPT
from auditor.report import DEFAULT_REPORTS_DIR, EXPORT_FORMATS
from auditor.sampler.defaults import DEFAULT_DELAY, DEFAULT_SAMPLE
from auditor.walkoptions import WalkOptions

if TYPE_CHECKING:
    from auditor.audit import AuditOptions
    from auditor.fleet import CrawlList
    from auditor.fleet.reports import DrawnReport
    from auditor.history import History
    from auditor.scorer.result import AuditResult

__all__ = ["add_audit_commands"]


def _since(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date or time: {text}") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _add_sampling(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sample",
        type=positive_int,
        default=DEFAULT_SAMPLE,
        metavar="N",
        help=f"pages fetched per site and run at most, re-verification panel included "
        f"(default {DEFAULT_SAMPLE}: enough comparisons to reach the trust bar in one run); "
        "a sub-sitemap stops being sampled once its verdict is decided",
    )
    parser.add_argument(
        "--full-sample",
        action="store_true",
        help="fetch the whole --sample budget: no sub-sitemap stops early once decided",
    )
    parser.add_argument(
        "--delay",
        type=non_negative_float,
        default=DEFAULT_DELAY,
        metavar="S",
        help=f"seconds between two requests to one host (default {DEFAULT_DELAY:g}; "
        "robots.txt Crawl-delay wins when larger)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def _add_out(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        default=str(DEFAULT_REPORTS_DIR),
        metavar="DIR",
        help=f"where the HTML report goes (default {DEFAULT_REPORTS_DIR}/)",
    )


def add_audit_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register audit, reverify, history and changed."""
    audit = commands.add_parser(
        "audit",
        help=line("audit"),
        description="Audit SITE: walk its sitemaps, analyse the lastmod values, fetch a polite "
        "sample of pages, score lastmod against their evidence and the site's history, and "
        "save the run. Several sites (or --sites) run as a fleet: --concurrency at a time, "
        "on this machine or a Dask --cluster, one request at a time per host name across "
        "them all; with --json, one result a line (JSON Lines) as each finishes.",
    )
    audit.add_argument(
        "site", nargs="*", metavar="SITE", help="site origin (or one of its sitemap URLs)"
    )
    _add_sampling(audit)
    add_db_option(audit)
    _add_out(audit)
    add_max_files(audit)
    add_http_options(audit)
    add_fleet_options(audit)
    audit.set_defaults(handler=_cmd_audit)

    reverify = commands.add_parser(
        "reverify",
        help=line("reverify"),
        description="Re-audit every site whose re-verification is due, re-fetching a panel "
        "of its previously sampled pages so changes can be observed. Several due sites run "
        "as a fleet (see audit); --json writes one result a line (JSON Lines).",
    )
    _add_sampling(reverify)
    add_db_option(reverify)
    _add_out(reverify)
    add_max_files(reverify)
    add_http_options(reverify)
    add_fleet_options(reverify, crawl_list=False)
    reverify.set_defaults(handler=_cmd_reverify)

    report = commands.add_parser(
        "report",
        help=line("report"),
        description="Write each SITE's HTML report with its PNG charts into DIR/<site>/ "
        "(--all: every site in the history, drawn on every core), and the fleet index of "
        "every site into DIR/index.html.",
    )
    report.add_argument("site", nargs="*", metavar="SITE", help="site origin (audited before)")
    report.add_argument(
        "--all", action="store_true", help="every site in the history (a fleet's reports)"
    )
    add_db_option(report)
    _add_out(report)
    report.set_defaults(handler=_cmd_report)

    export = commands.add_parser(
        "export",
        help=line("export"),
        description="Write the history's sites, runs, segments (sub-sitemap verdicts) and "
        "pages (page observations) as CSV, Parquet or JSON Lines, one file each.",
    )
    export.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        type=renamed_choice("--format", "json", "jsonl"),
        required=True,
        help="the files' format: CSV, Parquet, or JSON Lines (NAME.jsonl, one object a line)",
    )
    add_db_option(export)
    export.add_argument(
        "--out",
        default=str(DEFAULT_REPORTS_DIR / "export"),
        metavar="DIR",
        help=f"folder for the files (default {DEFAULT_REPORTS_DIR / 'export'})",
    )
    export.set_defaults(handler=_cmd_export)

    add_demo_command(commands)

    history = commands.add_parser(
        "history",
        help=line("history"),
        description="List the runs kept in the history (of SITE alone if given), oldest "
        "first: run, site, start, verdict, and the crawl batches each verdict weighed.",
    )
    history.add_argument("site", nargs="?", metavar="SITE", help="only this site")
    history.add_argument("--json", action="store_true", help="print the runs as JSON")
    add_db_option(history)
    history.set_defaults(handler=cmd_history)

    changed = commands.add_parser(
        "changed",
        help=line("changed"),
        description="URLs to recrawl since --since: on trusted sub-sitemaps, those whose "
        "lastmod is newer plus the undated ones; elsewhere, every URL.",
    )
    changed.add_argument("site", metavar="SITE", help="site origin (audited before)")
    changed.add_argument(
        "--since",
        type=_since,
        required=True,
        metavar="ISO",
        help="list what changed after this moment: an ISO 8601 date or time (UTC unless it "
        "says otherwise), e.g. the crawler's last pass",
    )
    changed.add_argument(
        "--format",
        choices=("text", "jsonl"),
        default="text",
        help="text: one URL a line; jsonl: one JSON object a line (default text)",
    )
    add_db_option(changed)
    changed.set_defaults(handler=cmd_changed)


def _options(args: argparse.Namespace) -> AuditOptions:
    from auditor.audit import AuditOptions
    from auditor.sampler import SampleOptions

    http = http_options(args)
    return AuditOptions(
        walk=WalkOptions(http=http, max_files=args.max_files),
        sample=SampleOptions(
            sample=args.sample,
            delay=args.delay,
            sequential=not args.full_sample,
            http=http_options(args, retries=0, accept=PAGE_ACCEPT),
        ),
    )


def _print_result(result: AuditResult, as_json: bool) -> None:
    from auditor.terminal import audit_summary

    if as_json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(audit_summary(result))
        if result.report:
            print(f"  report: {result.report}")


def _cmd_audit(args: argparse.Namespace) -> int:
    if args.cluster is None and _fleet_coming(args):  # its workers' imports meanwhile
        from auditor.fleet.forkserver import start_worker_server

        start_worker_server()
    from auditor.audit import audit_site
    from auditor.fleet.engine import with_proxy
    from auditor.history import History
    from auditor.report import write_report

    found = sites_of(args)  # a usage error before the database is touched
    if is_fleet(args, len(found)):
        with History.open(args.db, reconnect=args.db_reconnect) as history:
            return run_fleet(args, found, _options(args), history)
    options = with_proxy(_options(args), found.proxy_of(0))
    target = _settled(found, options)
    progress = progress_for(args)
    with History.open(args.db) as history:
        try:
            result = audit_site(target, history, options, on_progress=progress)
        except Unreachable as exc:  # nothing saved: not a finding about the site
            return _unreached(exc, args.json)
        finally:
            progress.clear()
        path = write_report(history, result.site, Path(args.out))
    result = replace(result, report=str(path))
    _print_result(result, args.json)
    return EXIT_OK if result.inventory.get("sitemaps", 0) else EXIT_FAILED


def _fleet_coming(args: argparse.Namespace) -> bool:
    """True when the command line alone says the sites run as a fleet (before the crawl
    list is read): a crawl list, several sites, or fleet options (see :func:`is_fleet`)."""
    return bool(args.sites) or len(args.site) > 1 or is_fleet(args, 1)


def _settled(found: CrawlList, options: AuditOptions) -> str:
    """The one site's target: https, or http where a bare name's server speaks no TLS
    (:mod:`auditor.schemes`)."""
    from auditor.schemes import settled
    from auditor.walker.discovery import classify_target

    target = classify_target(found.targets[0])
    bare = replace(target, scheme_given=found.sites[0] not in found.bare)

    def say(message: str) -> None:
        sys.stderr.write(f"auditor: {message}\n")

    return settled(bare, options.walk.http, say).value


def _unreached(exc: Unreachable, as_json: bool) -> int:
    """A site never reached: its cause on stderr (with --json, its failure record on
    stdout, as a fleet's line); the command failed."""
    from auditor.fleet.outcome import SiteFailure

    if as_json:
        print(json.dumps(SiteFailure(exc.site, "unreachable", exc.cause).to_dict()))
    sys.stderr.write(f"auditor: {exc}\n")
    return EXIT_FAILED


def _cmd_reverify(args: argparse.Namespace) -> int:
    from auditor.audit import audit_site
    from auditor.fleet import crawl_list
    from auditor.history import History
    from auditor.report import write_report

    results = []
    progress = progress_for(args)
    with History.open(args.db, reconnect=args.db_reconnect) as history:
        due_now = [record.origin for record in history.due_sites(datetime.now(UTC))]
        due = crawl_list([*due_now, *history.never_audited()])  # a first fleet cut short
        if is_fleet(args, len(due)):
            return run_fleet(args, due, _options(args), history)
        failed = 0
        for site in due.sites:
            progress(f"re-verifying {site}")
            try:
                result = audit_site(site, history, _options(args), on_progress=progress)
            except Unreachable as exc:  # still due: the next reverify tries it again
                progress.clear()
                failed += _unreached(exc, args.json)
                continue
            path = write_report(history, result.site, Path(args.out))
            results.append(replace(result, report=str(path)))
        progress.clear()
    if args.json:
        for result in results:
            print(json.dumps(result.to_dict(), ensure_ascii=False))
    elif not results and not failed:
        print("auditor: no site is due for re-verification")
    else:
        for result in results:
            _print_result(result, as_json=False)
    return EXIT_FAILED if failed else EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from auditor.history import History
    from auditor.report import refresh_fleet_index, write_report
    from auditor.schemes import site_in_history

    if args.all == bool(args.site):
        raise UsageError("give SITE arguments or --all, not both")
    with History.open(args.db) as history:
        sites = [site_in_history(text, history) for text in args.site]
        if len(sites) == 1:
            print(write_report(history, sites[0], Path(args.out)))
            return EXIT_OK
        if args.all:
            sites = [record.origin for record in history.sites()]
            if not sites:
                sys.stderr.write("auditor: no site in the history: no report to draw\n")
        written = _draw_reports(history, sites, Path(args.out))
        refresh_fleet_index(history, Path(args.out))
    return EXIT_OK if written == len(sites) else EXIT_FAILED


def _draw_reports(history: History, sites: list[str], out: Path) -> int:
    """Draw ``sites``' reports on every core, printing each file as it is written;
    returns how many were."""
    from auditor.fleet.reports import ReportWriter

    if not sites:
        return 0  # no pool to start
    with ReportWriter(history, out) as writer:
        writer.start()
        for site in sites:
            writer.add(site)
            _print_drawn(writer.take())
        writer.drain()
        _print_drawn(writer.take())
        return writer.written


def _print_drawn(reports: list[DrawnReport]) -> None:
    for report in reports:
        if report.path is None:
            sys.stderr.write(f"auditor: no report for {report.site} (see the log above)\n")
        else:
            print(report.path, flush=True)


def _cmd_export(args: argparse.Namespace) -> int:
    from auditor.history import History
    from auditor.report import export_tables

    with History.open(args.db) as history:
        paths = export_tables(history, args.format, Path(args.out))
    for path in paths:
        print(path)
    return EXIT_OK
