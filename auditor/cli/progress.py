"""A fleet's progress on stderr: plain lines, a live bar on a terminal, or nothing
(``-q``), and what the summary keeps of it.

Touches: nothing.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from auditor.words import counted

if TYPE_CHECKING:
    from auditor.fleet import FleetProgress

__all__ = ["FleetDisplay", "fleet_display"]


def fleet_display(total: int, args: argparse.Namespace) -> FleetDisplay:
    """A rich progress bar when stderr is a terminal, plain lines otherwise (and under
    -v, between the log records); nothing under -q."""
    if getattr(args, "quiet", False):
        return _Silent(total)
    if sys.stderr.isatty() and not getattr(args, "verbose", 0):
        return _RichDisplay(total)
    return FleetDisplay(total)


class FleetDisplay:
    """Plain progress lines on stderr, one each time a site finishes."""

    def __init__(self, total: int) -> None:
        self.total = total
        self._done = 0
        self.pages = 0  # pages fetched, as the fleet last said
        self.last: FleetProgress | None = None  # where the fleet last said it stood

    def seen(self, progress: FleetProgress) -> None:
        """Keep what the summary needs of ``progress``."""
        self.pages, self.last = progress.pages, progress

    def show(self, progress: FleetProgress) -> None:
        """Render where the fleet stands."""
        self.seen(progress)
        if progress.done == self._done:
            return
        self._done = progress.done
        sys.stderr.write(f"auditor: {_progress_text(progress)}\n")
        sys.stderr.flush()

    def close(self) -> None:
        """Stop displaying."""


class _Silent(FleetDisplay):
    """No progress at all (-q)."""

    def show(self, progress: FleetProgress) -> None:
        """Say nothing (but keep what the summary needs)."""
        self.seen(progress)


class _RichDisplay(FleetDisplay):
    """A live progress bar (rich): done of total, in flight, pages fetched, failures, ETA."""

    def __init__(self, total: int) -> None:
        super().__init__(total)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._progress = Progress(
            TextColumn("sites"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task("fleet", total=total, status="starting")
        self._progress.start()

    def show(self, progress: FleetProgress) -> None:
        """Move the bar."""
        self.seen(progress)
        status = _progress_text(progress).split(" done", 1)[1].lstrip(", ")
        self._progress.update(self._task, completed=progress.done, status=status)

    def close(self) -> None:
        """Take the bar off the terminal."""
        self._progress.stop()


def _progress_text(p: FleetProgress) -> str:
    eta = "" if p.eta is None else f", about {_duration(p.eta)} left"
    return (
        f"{p.done} of {counted(p.total, 'site')} done, {p.in_flight} in flight, "
        f"{counted(p.pages, 'page')} fetched, "
        f"{p.failed} failed{eta}"
    )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
