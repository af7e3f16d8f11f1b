"""A fleet's summary at its end: verdict counts, failures with their reasons, and, when
it stopped early, how many sites finished, failed, were in flight and were never started,
and how to pick up the rest. Text, and with ``--json`` one JSON object besides. Part of
the CLI layer (prints).

Touches: nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor.cli.args import EXIT_INTERRUPTED
from auditor.words import counted, noun

if TYPE_CHECKING:
    from auditor.fleet import FleetProgress, SiteFailure
    from auditor.history.fleets import FleetPlan

__all__ = ["Tally", "summary"]

_SIGNALLED = (EXIT_INTERRUPTED, 143)


@dataclass(frozen=True)
class Tally:
    """What became of a fleet's sites. ``finished + failed + in_flight + not_started``
    is ``total`` (the sites this session was to audit)."""

    total: int
    verdicts: dict[str, int]
    failures: list[SiteFailure] = field(default_factory=list)
    in_flight: int = 0  # sent, dropped when the fleet stopped: nothing of them saved
    not_started: int = 0
    status: int = 0
    stopped: str | None = None  # why the fleet stopped early (a signal, a fault), or None
    plan: FleetPlan | None = None
    reports: int = 0  # site reports drawn
    report_policy: str | None = None  # the fleet's --reports

    @classmethod
    def of(
        cls,
        outcomes: list[Any],
        last: FleetProgress | None,
        total: int,
        status: int,
        stopped: BaseException | None,
        plan: FleetPlan | None,
    ) -> Tally:
        """Count ``outcomes`` (what was printed of each site done) against the fleet's
        ``last`` progress (the sites it had sent)."""
        from auditor.fleet import SiteFailure

        failures = [o for o in outcomes if isinstance(o, SiteFailure)]
        verdicts = Counter(o.verdict for o in outcomes if not isinstance(o, SiteFailure))
        not_done = max(0, total - len(outcomes))
        sent = last.sent if last is not None else 0
        in_flight = min(not_done, max(0, sent - len(outcomes)))
        why = str(stopped) if stopped is not None else None
        if why is None and status in _SIGNALLED:
            why = "interrupted"
        return cls(
            total, dict(verdicts.most_common()), failures, in_flight, not_done - in_flight,
            status, why, plan,
        )  # fmt: skip

    @property
    def finished(self) -> int:
        """Sites whose run was saved."""
        return sum(self.verdicts.values())

    @property
    def failed(self) -> int:
        """Sites that failed, each with its reason."""
        return len(self.failures)

    def to_dict(self, pages: int, index: Path | None) -> dict[str, Any]:
        """The ``--json`` summary."""
        plan = self.plan
        return {
            "schema": 1,
            "summary": {
                "total": self.total,
                "finished": self.finished,
                "failed": self.failed,
                "in_flight": self.in_flight,
                "not_started": self.not_started,
                "verdicts": self.verdicts,
                "failures": [f.to_dict()["failed"] | {"site": f.site} for f in self.failures],
                "pages": pages,
                "stopped": self.stopped,
                "fleet": None if plan is None else plan.fleet_id,
                "done_before": 0 if plan is None else plan.done_before,
                "index": None if index is None else str(index),
                "reports": {"drawn": self.reports, "policy": self.report_policy},
            },
        }


def summary(tally: Tally, index: Path | None, args: argparse.Namespace, *, pages: int) -> None:
    """Print the summary: on stdout, or on stderr with ``--json`` followed there by the
    summary as one JSON object (its last line)."""
    stream = sys.stderr if args.json else sys.stdout
    stream.write("\n".join(_lines(tally, index, args, pages)) + "\n")
    if args.json:
        stream.write(json.dumps(tally.to_dict(pages, index), ensure_ascii=False) + "\n")
    stream.flush()


def _lines(tally: Tally, index: Path | None, args: argparse.Namespace, pages: int) -> list[str]:
    counts = ", ".join(f"{n} {v}" for v, n in tally.verdicts.items()) or "no result"
    done = tally.finished + tally.failed
    lines = [
        f"auditor: {done} of {counted(tally.total, 'site')} done: {counts}; {tally.failed} "
        f"failed; {counted(pages, 'page')} fetched in all"
    ]
    lines += [f"  failed: {f.site}: {f.code}: {f.detail}" for f in tally.failures]
    if tally.plan is not None and tally.plan.resumed:
        lines.append(
            f"  resumed fleet {tally.plan.fleet_id}: {counted(tally.plan.done_before, 'site')} "
            f"{noun(tally.plan.done_before, 'was', 'were')} done before (not audited again)"
        )
    if tally.stopped is not None:
        word = "interrupted" if tally.stopped == "interrupted" else "stopped early"
        lines.append(
            f"  {word}: {tally.finished} finished and saved, {tally.failed} failed, "
            f"{tally.in_flight} in flight (dropped, nothing saved), {tally.not_started} never "
            f"started; {_pick_up(tally, args)}"
        )
    if tally.report_policy is not None:
        lines.append(_reports_line(tally, args))
    if index is not None:
        lines.append(f"  fleet index: {index}")
    return lines


_DRAWN = {
    "changed": "the sites audited for the first time or whose verdict changed since",
    "all": "every site finished",
    "none": "none asked for",
}


def _reports_line(tally: Tally, args: argparse.Namespace) -> str:
    policy = tally.report_policy or "changed"
    line = f"  reports: {tally.reports} drawn (--reports {policy}: {_DRAWN[policy]})"
    if policy != "all":
        line += f"; the others: `auditor report SITE` or `auditor report --all --out {args.out}`"
    if policy == "changed" and tally.reports:
        line += "; --reports none to draw none"
    return line


def _pick_up(tally: Tally, args: argparse.Namespace) -> str:
    if not hasattr(args, "resume"):
        return "`auditor reverify` picks up what is still due"
    left = tally.failed + tally.in_flight + tally.not_started
    return (
        f"the same `auditor audit` with --resume audits the {counted(left, 'site')} without a "
        "run of this fleet (and `auditor reverify` knows those never audited)"
    )
