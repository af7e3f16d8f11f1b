"""Exit codes, argument types, option groups and progress shared by the CLI modules.

Touches: nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from auditor.http import DEFAULT_CONTACT, DEFAULT_TIMEOUT, HttpOptions
from auditor.logs import Progress
from auditor.walker import DEFAULT_MAX_FILES

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "add_db_option",
    "add_http_options",
    "add_log_options",
    "add_max_files",
    "http_options",
    "non_negative_float",
    "positive_float",
    "positive_int",
    "progress_for",
]

#: Exit status (README "Usage"): the command did its job, could not, was misused,
#: or was interrupted (128 + SIGINT, as shells report it).
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def progress_for(args: argparse.Namespace) -> Progress:
    """Progress on stderr: a redrawn line on a terminal, log records under -v, none under -q."""
    return Progress(sys.stderr, verbose=args.verbose, quiet=args.quiet)


def positive_float(text: str) -> float:
    """An argparse type: a number greater than 0."""
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


def non_negative_float(text: str) -> float:
    """An argparse type: a number, 0 or more."""
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number greater than 0."""
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


def add_http_options(parser: argparse.ArgumentParser) -> None:
    """--timeout, --contact, --proxy and --header."""
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds one request may take in all, from connecting to the last byte, "
        f"redirects, retries and their waits included (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--contact",
        default=os.environ.get("AUDITOR_CONTACT", DEFAULT_CONTACT),
        metavar="URL",
        help="contact URL or e-mail put in the User-Agent, so that a site can reach whoever "
        "runs the crawl (default: $AUDITOR_CONTACT, else none)",
    )
    parser.add_argument(
        "--proxy",
        type=_proxy,
        metavar="URL",
        help="send every request through this proxy, robots.txt included: http://, https://, "
        "socks5:// or socks5h:// (SOCKS: the 'socks' extra); default: $HTTPS_PROXY, "
        "$HTTP_PROXY, $ALL_PROXY, less $NO_PROXY",
    )
    parser.add_argument(
        "--header",
        action="append",
        type=_header,
        default=[],
        metavar="'NAME: VALUE'",
        help="add this header to every request (repeatable; a cookie, a partner's API key); "
        "never logged, reported or saved; a User-Agent is refused (see --contact)",
    )


def _proxy(text: str) -> str:
    from auditor.http.proxy import ProxyError, check_proxy

    try:
        return check_proxy(text)
    except ProxyError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _header(text: str) -> tuple[str, str]:
    from auditor.http.extra_headers import HeaderError, parse_header

    try:
        return parse_header(text)
    except HeaderError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def http_options(args: argparse.Namespace, **overrides: Any) -> HttpOptions:
    """The HttpOptions of a command's --timeout, --contact, --proxy and --header, with
    ``overrides`` (e.g. ``accept=PAGE_ACCEPT``)."""
    given = {
        "timeout": args.timeout,
        "contact": args.contact,
        "proxy": args.proxy,
        "headers": tuple(args.header),
    }
    return HttpOptions(**{**given, **overrides})


def add_max_files(parser: argparse.ArgumentParser) -> None:
    """--max-files."""
    parser.add_argument(
        "--max-files",
        type=positive_int,
        default=DEFAULT_MAX_FILES,
        metavar="N",
        help=f"read at most N sitemap files (default {DEFAULT_MAX_FILES:,})",
    )


def add_log_options(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """-v/--verbose and -q/--quiet on every subcommand (call once, after the last is added)."""
    for parser in commands.choices.values():
        group = parser.add_mutually_exclusive_group()
        group.add_argument(
            "-v",
            "--verbose",
            action="count",
            default=0,
            help="log what is done to stderr: each request, retry, wait, sitemap file, problem "
            "and skipped page (-vv: also each pause between requests)",
        )
        group.add_argument(
            "-q",
            "--quiet",
            action="store_true",
            help="nothing on stderr but errors: no progress, no summary (stdout is unchanged)",
        )


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """--db: the history database."""
    from auditor.history.db import default_db_path

    parser.add_argument(
        "--db",
        metavar="DB",
        help="history database: a SQLite path (or sqlite:///PATH) or "
        f"postgresql://user@host:port/dbname (default: $AUDITOR_DB, else {default_db_path()})",
    )
