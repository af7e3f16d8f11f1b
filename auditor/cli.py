"""The command line: the only place that reads argv, prints and exits.

Exit codes (contract): 0 the command did its job, 1 it could not (e.g. no
sitemap readable at all), 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from auditor import __version__
from auditor.errors import AuditorError, UsageError
from auditor.http import DEFAULT_CONTACT, DEFAULT_TIMEOUT, HttpOptions
from auditor.walker import DEFAULT_MAX_FILES, Walk, WalkOptions
from auditor.walker.output import write_csv, write_walk_jsonl

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class ProgressLine:
    """A one-line progress display on stderr, redrawn at most every 0.2 s."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._last = 0.0
        self._shown = False

    def __call__(self, files: int, urls: int) -> None:
        now = time.monotonic()
        if now - self._last < 0.2:
            return
        self._last = now
        self._shown = True
        self._stream.write(f"\r{files:,} files read, {urls:,} URLs so far ")
        self._stream.flush()

    def finish(self) -> None:
        """Clear the line."""
        if self._shown:
            self._stream.write("\r\033[K")
            self._stream.flush()


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


def _add_http_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"total seconds per request, connect to last byte (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--contact",
        default=os.environ.get("AUDITOR_CONTACT", DEFAULT_CONTACT),
        metavar="URL",
        help="contact URL or e-mail put in the User-Agent (default: $AUDITOR_CONTACT or the "
        "project page)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="auditor",
        description="Tell whether a website's sitemap <lastmod> can be trusted for crawl "
        "scheduling.",
    )
    parser.add_argument("--version", action="version", version=f"auditor {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    walk = commands.add_parser(
        "walk",
        help="list every URL of a site's sitemaps with its lastmod",
        description="Find and read every sitemap of TARGET and write one record per unique URL.",
    )
    walk.add_argument("target", metavar="TARGET", help="site origin, sitemap URL or local file")
    walk.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    walk.add_argument(
        "--problems",
        metavar="FILE",
        help="write one JSON object per problem to FILE (- for stderr)",
    )
    walk.add_argument(
        "--max-files",
        type=_positive_int,
        default=DEFAULT_MAX_FILES,
        metavar="N",
        help=f"read at most N sitemap files (default {DEFAULT_MAX_FILES:,})",
    )
    _add_http_options(walk)
    walk.set_defaults(handler=_cmd_walk)
    return parser


def _cmd_walk(args: argparse.Namespace) -> int:
    options = WalkOptions(
        http=HttpOptions(timeout=args.timeout, contact=args.contact),
        max_files=args.max_files,
    )
    progress = ProgressLine(sys.stderr) if sys.stderr.isatty() else None
    walk = Walk(args.target, options, on_progress=progress)
    out = sys.stdout
    try:
        if args.format == "csv":
            write_csv(walk, out)
        else:
            write_walk_jsonl(walk, out)
        out.flush()
    finally:
        if progress is not None:
            progress.finish()
        if args.problems:
            _write_problems(walk, args.problems)
    _summary(walk)
    return EXIT_OK if walk.readable else EXIT_FAILED


def _write_problems(walk: Walk, path: str) -> None:
    lines = "".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in walk.problems)
    if path == "-":
        sys.stderr.write(lines)
        return
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(lines)


def _summary(walk: Walk) -> None:
    readable = sum(f.readable for f in walk.files)
    line = (
        f"auditor: {walk.urls:,} URLs from {readable:,} of {len(walk.files):,} sitemap files, "
        f"{len(walk.problems):,} problems"
    )
    if not walk.readable:
        line += " (no sitemap could be read)"
    print(line, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``auditor`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
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
        return 130


if __name__ == "__main__":
    sys.exit(main())
