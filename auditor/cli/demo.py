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
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from auditor.cli.args import EXIT_OK, non_negative_float, progress_for
from auditor.cli.commands import line
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
#: What :meth:`_Signals.wait` reports for Enter pressed: no signal has the number 0.
PRESSED = 0


def add_demo_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``auditor demo``."""
    demo = commands.add_parser(
        "demo",
        help=line("demo"),
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
        "conclude); Enter in its terminal, or kill -USR1 PID, changes them at once",
    )
    demo.add_argument(
        "--change-every",
        type=non_negative_float,
        metavar="SECONDS",
        help="with --serve: every SECONDS, let the time since the last change pass on every "
        "site (some pages change, and their lastmods do or not as each behaviour says; a "
        f"line on stderr each time); default {DEFAULT_CHANGE_EVERY:g}, 0: only on Enter or SIGUSR1",
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
    with _Signals(watched, keys=_keyboard()) as signals, PracticeSites() as sites:
        width = max(len(site.name) for site in sites.served)
        for site in sites.served:
            print(f"{site.origin}  {site.name:<{width}}  {site.expected}", flush=True)
        say(_started(len(sites.served), every, keys=signals.keys is not None))
        _until_stopped(sites, signals, every, say)
    say("auditor: stopped; the demo's sites are closed")
    return EXIT_OK


def _started(count: int, every: float, *, keys: bool) -> str:
    pid = os.getpid()
    ways = [f"every {every:g} s"] if every else []
    ways += ["when you press Enter here"] if keys else []
    ways += [f"on kill -USR1 {pid}"] if CHANGE is not None else []
    how = ", ".join(ways[:-1]) + " and " + ways[-1] if len(ways) > 1 else "".join(ways)
    change = f"; they change {how}" if ways else "; they never change"
    return f"auditor: serving {count} demo sites until Ctrl-C (pid {pid}){change}"


def _keyboard() -> int | None:
    """Standard input's descriptor when it is a terminal whose foreground is this process
    (a command typed there, not one sent to the background with &, which would stop on
    reading it): Enter there changes the sites. None otherwise, or off POSIX."""
    if os.name != "posix" or not sys.stdin or not sys.stdin.isatty():
        return None
    return sys.stdin.fileno() if _in_foreground(sys.stdin.fileno()) else None


def _in_foreground(fd: int) -> bool:
    """True when this process is in the foreground of terminal ``fd``."""
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return False  # not this process's controlling terminal


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

    def __init__(self, numbers: tuple[int, ...], *, keys: int | None = None) -> None:
        self._numbers = numbers
        #: A terminal's descriptor where Enter changes the sites, as :data:`CHANGE` does
        #: (None: no keys read).
        self.keys = keys
        import socket  # here: --help needs none

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
        """The signals that arrived (:data:`PRESSED` for Enter), waiting up to ``timeout``
        seconds (None: until one does) for the first; empty when none came in time."""
        signalled = self._reader.fileno()
        watched = [signalled] if self.keys is None else [signalled, self.keys]
        readable, _, _ = select.select(watched, [], [], timeout)
        got = self._pressed() if self.keys in readable else []
        if signalled not in readable:
            return got
        try:
            return got + [n for n in self._reader.recv(64) if n in self._numbers]
        except BlockingIOError:
            return got

    def _pressed(self) -> list[int]:
        """[PRESSED] when Enter was pressed; the keys are no longer read once the terminal
        is closed (end of input) or this process is no longer in its foreground."""
        assert self.keys is not None
        if not _in_foreground(self.keys):
            self.keys = None
            return []
        typed = os.read(self.keys, 1024)
        if not typed:
            self.keys = None
        return [PRESSED] if b"\n" in typed else []


def _noted(number: int, frame: object) -> None:
    """A signal's handler: its number is already on the wakeup socket (see _Signals)."""
