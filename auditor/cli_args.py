"""Argument types and option groups shared by the CLI modules."""

from __future__ import annotations

import argparse
import os

from auditor.http import DEFAULT_CONTACT, DEFAULT_TIMEOUT
from auditor.walker import DEFAULT_MAX_FILES

__all__ = [
    "add_http_options",
    "add_max_files",
    "non_negative_float",
    "positive_float",
    "positive_int",
]


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
    """--timeout and --contact."""
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
        help="contact URL or e-mail put in the User-Agent (default: $AUDITOR_CONTACT or the "
        "project page)",
    )


def add_max_files(parser: argparse.ArgumentParser) -> None:
    """--max-files."""
    parser.add_argument(
        "--max-files",
        type=positive_int,
        default=DEFAULT_MAX_FILES,
        metavar="N",
        help=f"read at most N sitemap files (default {DEFAULT_MAX_FILES:,})",
    )
