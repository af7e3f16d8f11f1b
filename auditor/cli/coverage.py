"""The command line of coverage checks: coverage.

Part of the CLI layer with :mod:`auditor.cli` (the only modules that read argv,
print and exit).

Touches: the database, the disk.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import TYPE_CHECKING

from auditor.cli.args import EXIT_OK, add_db_option, add_old_name
from auditor.cli.commands import line
from auditor.errors import UsageError

if TYPE_CHECKING:
    from auditor.coverage import CoverageResult
    from auditor.history import History

__all__ = ["add_coverage_command", "coverage_text"]

#: The findings of the summary's last line, with their words.
_WORDS = (
    ("redirect", "redirect"),
    ("client-error", "answer 4xx"),
    ("server-error", "answer 5xx"),
    ("noindex", "say noindex"),
    ("canonical-elsewhere", "name another URL canonical"),
)


def add_coverage_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register coverage."""
    coverage = commands.add_parser(
        "coverage",
        help=line("coverage"),
        description="Compare the URLs SITE's sitemaps list (its freshest walk in the history) "
        "with what was crawled: a crawl log (--from: JSON Lines, CSV or WARC, as "
        "`auditor crawled` reads them), else the fetches `auditor crawled` recorded. Lists "
        "per sub-sitemap the URLs never crawled, those listed in several sub-sitemaps, and "
        "those whose fetch (by the crawler or the audit's sample) redirected, answered 4xx "
        "or 5xx, said noindex or named another canonical URL; and the URLs crawled but "
        "listed in no sitemap.",
    )
    coverage.add_argument("site", metavar="SITE", help="site origin (audited before)")
    coverage.add_argument(
        "--from",
        dest="crawled",
        metavar="FILE",
        help="the crawl log (- for stdin; default: the history's crawl record)",
    )
    add_old_name(coverage, "--crawled", "--from")  # its name until issue 34
    coverage.add_argument(
        "--format",
        choices=("jsonl", "csv", "warc"),
        help="the log's format (default: by the file's name; jsonl for stdin)",
    )
    coverage.add_argument("--json", action="store_true", help="print the result as JSON")
    add_db_option(coverage)
    coverage.set_defaults(handler=_cmd_coverage)


def _cmd_coverage(args: argparse.Namespace) -> int:
    from auditor.history import History
    from auditor.schemes import site_in_history

    with History.open(args.db) as history:
        site = site_in_history(args.site, history)
        if history.site_id(site) is None:
            raise UsageError(f"not in the history (audit it first): {site}")
        result = _check(history, site, args)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(coverage_text(result))
    return EXIT_OK


def _check(history: History, site: str, args: argparse.Namespace) -> CoverageResult:
    from auditor.coverage import check_coverage

    if args.crawled is None:
        return check_coverage(history, site)
    from auditor.cli.plan import log_records, open_log
    from auditor.crawl.logfile import detect_format

    source = args.crawled
    form = args.format or ("jsonl" if source == "-" else detect_format(source))
    if form is None:
        raise UsageError(f"{source}: say its format with --format jsonl|csv|warc")
    problems: Counter[str] = Counter()
    stream = open_log(source)
    try:
        records = log_records(stream, form, problems, quiet=args.quiet)
        result = check_coverage(history, site, crawled=records, crawled_from=source)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if problems and not args.quiet:
        print(f"auditor: {sum(problems.values()):,} malformed lines skipped", file=sys.stderr)
    return result


def coverage_text(result: CoverageResult) -> str:
    """The short human summary of a coverage check."""
    totals = result.totals
    source = "the crawl record" if result.crawled_from == "history" else result.crawled_from
    lines = [
        f"{result.site}: {result.urls:,} URLs listed in {len(result.sitemaps)} sub-sitemaps "
        f"(walk of {result.walked_at:%Y-%m-%d %H:%M} UTC), against {source}",
        f"  crawled {result.crawled:,} of them; {totals['not-crawled']:,} never crawled; "
        f"{_at_least(result.orphans, result.orphans_exact)} crawled but listed in no sitemap",
        f"  {_at_least(result.several, result.several_exact)} listed in more than one sub-sitemap",
    ]
    fetched = ", ".join(f"{totals[code]:,} {words}" for code, words in _WORDS)
    lines.append(f"  of the listed URLs fetched: {fetched}")
    worst = sorted(result.sitemaps, key=lambda s: -sum(s.counts.values()))[:5]
    for s in worst:
        counts = ", ".join(f"{code} {n:,}" for code, n in s.counts.items() if n)
        lines.append(f"  {s.sitemap}: {s.urls:,} URLs, {s.crawled:,} crawled; {counts or '-'}")
    return "\n".join(lines)


def _at_least(count: int, exact: bool) -> str:
    return f"{count:,}" if exact else f"at least {count:,}"
