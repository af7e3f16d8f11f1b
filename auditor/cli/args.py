"""Exit codes, argument types, option groups and progress shared by the CLI modules.

Touches: nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from auditor.errors import UsageError
from auditor.logs import Progress

if TYPE_CHECKING:
    from auditor.http.options import HttpOptions

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "add_db_option",
    "add_http_options",
    "add_log_options",
    "add_max_files",
    "add_old_name",
    "deprecated",
    "http_options",
    "no_site_listed",
    "non_negative_float",
    "positive_float",
    "positive_int",
    "progress_for",
    "renamed_choice",
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
    from auditor.http.options import DEFAULT_CONTACT, DEFAULT_TIMEOUT  # `auditor --help`: none

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
    from auditor.http.options import HttpOptions

    given = {
        "timeout": args.timeout,
        "contact": args.contact,
        "proxy": args.proxy,
        "headers": tuple(args.header),
    }
    return HttpOptions(**{**given, **overrides})


def add_max_files(parser: argparse.ArgumentParser) -> None:
    """--max-files."""
    from auditor.walkoptions import DEFAULT_MAX_FILES  # here: `auditor --help` needs none

    parser.add_argument(
        "--max-files",
        type=positive_int,
        default=DEFAULT_MAX_FILES,
        metavar="N",
        help=f"read at most N sitemap files (default {DEFAULT_MAX_FILES:,})",
    )


#: The commands that make HTTP requests without taking the HTTP options: the demo, to its
#: own sites on 127.0.0.1 (the others that do take --timeout).
_REQUESTING = frozenset({"demo"})

_VERBOSE_REQUESTS = (
    "log what is done to stderr: each request, retry, wait, sitemap file, problem and "
    "skipped page (-vv: also each pause between requests)"
)
_VERBOSE = "log what is done to stderr, a line a step (-vv: in more detail)"


def add_log_options(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """-v/--verbose and -q/--quiet on every subcommand (call once, after the last is added);
    -v speaks of requests on the commands that make them."""
    for name, parser in commands.choices.items():
        requests = name in _REQUESTING or "--timeout" in parser._option_string_actions
        group = parser.add_mutually_exclusive_group()
        group.add_argument(
            "-v",
            "--verbose",
            action="count",
            default=0,
            help=_VERBOSE_REQUESTS if requests else _VERBOSE,
        )
        group.add_argument(
            "-q",
            "--quiet",
            action="store_true",
            help="nothing on stderr but errors: no progress, no summary (stdout is unchanged)",
        )


def no_site_listed(doing: str, paths: list[str]) -> UsageError:
    """The usage error of crawl lists (``--sites`` files, ``-``: stdin) that name no site."""
    named = " and ".join("stdin" if path == "-" else path for path in paths)
    return UsageError(f"no site to {doing}: {named} lists no site (blank, or # comments only)")


def deprecated(old: str, new: str) -> None:
    """Say on stderr that ``old`` is a deprecated spelling of ``new`` (it still works)."""
    sys.stderr.write(f"auditor: {old} is deprecated: say {new} (the old spelling still works)\n")


class _OldName(argparse.Action):
    """A deprecated option name: stores into its new name's ``dest``, with a note."""

    def __init__(self, option_strings: list[str], dest: str, new: str = "", **kw: Any) -> None:
        super().__init__(option_strings, dest, **kw)
        self.new = new

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        deprecated(str(option_string), self.new)
        setattr(namespace, self.dest, values)


def add_old_name(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """Keep ``old`` working as a hidden alias of the option ``new`` (already added, one
    value): the same value, a deprecation note on stderr; ``--help`` shows ``new`` alone."""
    action = parser._option_string_actions[new]
    parser.add_argument(
        old, action=_OldName, new=new, dest=action.dest, metavar=action.metavar,
        choices=action.choices, type=action.type or str, help=argparse.SUPPRESS,
    )  # fmt: skip


def renamed_choice(option: str, old: str, new: str) -> Any:
    """An argparse ``type`` taking ``old`` as a deprecated spelling of the value ``new``
    (``--format json`` for ``jsonl``): ``new``, with a note on stderr."""

    def value(text: str) -> str:
        if text == old:
            deprecated(f"{option} {old}", f"{option} {new}")
            return new
        return text

    return value


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """--db: the history database."""
    from auditor.history.location import default_db_path  # not history.db: its schema loads

    parser.add_argument(
        "--db",
        metavar="DB",
        help="history database: a SQLite path (or sqlite:///PATH) or "
        f"postgresql://user@host:port/dbname (default: $AUDITOR_DB, else {default_db_path()})",
    )
