"""The command line of ``auditor demo``: the demo's audits, or (``--serve``) its sites kept
up on loopback for practice until Ctrl-C or SIGTERM, changed every so often and on SIGUSR1.

Part of the CLI layer with :mod:`auditor.cli` (the only modules that read argv,
print and exit).

Touches: the network, the database, the disk.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from auditor.cli.args import EXIT_OK, non_negative_float, progress_for
from auditor.errors import UsageError
from auditor.report import DEMO_DIR
from auditor.words import counted

if TYPE_CHECKING:
    from auditor.demo import DemoRow
    from auditor.demo.serve import PracticeSites

__all__ = ["add_demo_command"]

#: Seconds between two changes of the practice sites by default: a re-audit a few minutes
#: after the first sees pages changed, and a user reading the output is not flooded.
DEFAULT_CHANGE_EVERY = 60.0
#: The signals that stop the practice sites (Ctrl-C, a service manager's stop), and the one
#: that changes them at once (absent on Windows: there, only --change-every changes them).
STOPS = (signal.SIGINT, signal.SIGTERM)
CHANGE = getattr(signal, "SIGUSR1", None)


def add_demo_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``auditor demo``."""
    demo = commands.add_parser(
        "demo",
        help="audit embedded demo sites on 127.0.0.1 twice and write their reports "
        "(--serve: keep them up to practise on)",
        description="Start simulated sites on 127.0.0.1, one per lastmod behaviour, audit each "
        "twice with a simulated change in between, and write the reports and the fleet index. "
        "With --serve, audit nothing: keep the sites up for you to audit, until Ctrl-C.",
    )
    demo.add_argument(
        "--out",
        metavar="DIR",
        help=f"where the reports, the fleet index and the demo's history go (default {DEMO_DIR})",
    )
    demo.add_argument(
        "--db",
        metavar="DB",
        help="save the demo's runs into this history (a SQLite path or postgresql://...) "
        "instead of a fresh one of its own in DIR",
    )
    demo.add_argument(
        "--serve",
        action="store_true",
        help="audit nothing: serve the demo's sites on 127.0.0.1 until Ctrl-C or SIGTERM "
        "(exit 0), printing one line a site on stdout (URL, behaviour, what auditor should "
        "conclude); kill -USR1 PID changes them at once",
    )
    demo.add_argument(
        "--change-every",
        type=non_negative_float,
        metavar="SECONDS",
        help="with --serve: every SECONDS, let the time since the last change pass on every "
        "site (some pages change, and their lastmods do or not as each behaviour says; a "
        f"line on stderr each time); default {DEFAULT_CHANGE_EVERY:g}, 0: only on SIGUSR1",
    )
    demo.set_defaults(handler=_cmd_demo)


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.serve:
        if args.out is not None or args.db is not None:
            raise UsageError("--serve audits nothing: --out and --db are for the demo's audits")
        every = DEFAULT_CHANGE_EVERY if args.change_every is None else args.change_every
        return _serve(every, quiet=args.quiet)
    if args.change_every is not None:
        raise UsageError("--change-every changes the sites of --serve: give --serve too")
    return _audit(args)


def _audit(args: argparse.Namespace) -> int:
    from auditor.demo import run_demo
    from auditor.terminal import render_table

    started = time.monotonic()
    progress = progress_for(args)

    def show(row: DemoRow) -> None:
        progress(f"{row.name}: {row.first}, then {row.second}")

    rows, index = run_demo(Path(args.out or DEMO_DIR), on_row=show, db=args.db)
    progress.clear()
    table = [[r.name, r.first, r.second, r.expected, str(r.report)] for r in rows]
    headers = ("demo site", "run 1", "run 2", "expected", "report")
    print(render_table(headers, table, right=set()))
    print(f"\n{len(rows)} sites audited twice in {time.monotonic() - started:.0f} s.")
    print(f"Open the fleet index: {index}")
    return EXIT_OK


def _serve(every: float, *, quiet: bool) -> int:
    from auditor.demo.serve import PracticeSites

    def say(line: str) -> None:
        if not quiet:
            print(line, file=sys.stderr, flush=True)

    watched = (*STOPS, CHANGE) if CHANGE is not None else STOPS
    with _Signals(watched) as signals, PracticeSites() as sites:
        width = max(len(site.name) for site in sites.served)
        for site in sites.served:
            print(f"{site.origin}  {site.name:<{width}}  {site.expected}", flush=True)
        say(_started(len(sites.served), every))
        _until_stopped(sites, signals, every, say)
    say("auditor: stopped; the demo's sites are closed")
    return EXIT_OK


def _started(count: int, every: float) -> str:
    pid = os.getpid()
    when = f"every {every:g} s and " if every else ""
    how = f"{when}on kill -USR1 {pid}" if CHANGE is not None else f"every {every:g} s"
    return f"auditor: serving {count} demo sites until Ctrl-C (pid {pid}); they change {how}"


def _until_stopped(
    sites: PracticeSites, signals: _Signals, every: float, say: Callable[[str], None]
) -> None:
    """Change the sites every ``every`` seconds (0: never) and on SIGUSR1, until a stop."""
    due = time.monotonic() + every
    while True:
        got = signals.wait(max(0.0, due - time.monotonic()) if every else None)
        if any(number in STOPS for number in got):
            return
        if got or time.monotonic() >= due:
            change = sites.change()
            say(f"changed: {counted(change.pages, 'page')} on {counted(change.sites, 'site')}")
        if every and time.monotonic() >= due:
            due = time.monotonic() + every


class _Signals:
    """The given signals caught while the ``with`` lasts, and waited for with a timeout.

    Each handler does nothing itself: the signal's number is written to a socket
    (:func:`signal.set_wakeup_fd`) that :meth:`wait` reads, so no signal arriving while the
    sites change interrupts them, and a wait ends as soon as one arrives.
    """

    def __init__(self, numbers: tuple[int, ...]) -> None:
        self._numbers = numbers
        self._reader, self._writer = socket.socketpair()
        for end in (self._reader, self._writer):
            end.setblocking(False)
        self._before: dict[int, Any] = {}
        self._wakeup = -1

    def __enter__(self) -> Self:
        self._wakeup = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        for number in self._numbers:
            self._before[number] = signal.signal(number, _noted)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, before in self._before.items():
            signal.signal(number, before)
        signal.set_wakeup_fd(self._wakeup)
        self._reader.close()
        self._writer.close()

    def wait(self, timeout: float | None) -> list[int]:
        """The signals that arrived, waiting up to ``timeout`` seconds (None: until one does)
        for the first; empty when none came in time."""
        readable, _, _ = select.select([self._reader], [], [], timeout)
        if not readable:
            return []
        try:
            return [number for number in self._reader.recv(64) if number in self._numbers]
        except BlockingIOError:
            return []


def _noted(number: int, frame: object) -> None:
    """A signal's handler: its number is already on the wakeup socket (see _Signals)."""
