"""Pages fetched per run to reach a verdict: fixed sampling against sequential sampling.

Run by hand, never by pytest:
    python3 tests/benchmarks/bench_sampling.py [--sample N] [--runs N] [--error-rates TRIALS]

Each demo behaviour (auditor/demo/site.py, plus the mixed site) is served on loopback on a
simulated clock and audited ``--runs`` times a week apart (pages change in between), once
with fixed sampling (``SampleOptions(sequential=False)``: the whole budget every run) and
once with sequential sampling (the default: a sub-sitemap stops once its verdict is
decided, a condemned one gets a small confirming sample). It prints, per run, the pages
requested and the verdict reached, and the total over the runs.

``--error-rates`` adds a Monte Carlo check of what stopping early costs in correctness:
for sub-sitemaps whose pages agree with lastmod with probability p (credible
dateModified on every page), the share judged trusted after a budget of 25 pages, with
and without sequential stopping.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.audit import AuditOptions, audit_site  # noqa: E402
from auditor.demo.clock import SimulatedClock  # noqa: E402
from auditor.demo.server import SiteServer  # noqa: E402
from auditor.demo.site import BEHAVIOURS, SimulatedSite  # noqa: E402
from auditor.history import History  # noqa: E402
from auditor.sampler import SampleOptions  # noqa: E402

WEEK = timedelta(days=7)


@dataclass(frozen=True)
class Run:
    """One audit: pages requested and the verdict reached."""

    requested: int
    verdict: str


def _sites() -> dict[str, dict[str, object]]:
    sites: dict[str, dict[str, object]] = {name: {"pages": b} for name, b in BEHAVIOURS.items()}
    sites["mixed"] = {
        "products": BEHAVIOURS["generation-time"],
        "blog": BEHAVIOURS["accurate-jsonld"],
    }
    return sites


def _audit_runs(name: str, sections: dict, sample: int, runs: int, sequential: bool) -> list[Run]:
    start = datetime.now(UTC) - WEEK * runs
    clock = SimulatedClock(start)
    site = SimulatedSite(name, sections, seed=4, clock=start)  # type: ignore[arg-type]
    options = AuditOptions(
        sample=SampleOptions(sample=sample, delay=0.0, sequential=sequential),
        seed=7,
        clock=clock.now,
    )
    found = []
    with (
        tempfile.TemporaryDirectory() as folder,
        History.open(Path(folder) / "h.db") as history,
        SiteServer(site, clock.now) as server,
    ):
        for _ in range(runs):
            result = audit_site(server.origin, history, options)
            found.append(Run(result.sample.requested, result.verdict))
            clock.advance(WEEK)
            site.tick(WEEK)
    return found


def _cells(runs: list[Run]) -> str:
    return "  ".join(f"{r.requested:>3} {r.verdict:<12}" for r in runs)


def compare(sample: int, runs: int) -> None:
    """The table: per behaviour, fixed then sequential, pages and verdict per run."""
    heading = "  ".join(f"run {i + 1:<13}" for i in range(runs))
    print(f"--sample {sample}, {runs} runs a simulated week apart: pages requested, verdict\n")
    print(f"{'behaviour':<24} {'sampling':<10} {heading}  total")
    totals = {"fixed": 0, "sequential": 0}
    for name, sections in _sites().items():
        for mode in ("fixed", "sequential"):
            found = _audit_runs(name, sections, sample, runs, mode == "sequential")
            total = sum(r.requested for r in found)
            totals[mode] += total
            print(f"{name if mode == 'fixed' else '':<24} {mode:<10} {_cells(found)}  {total:>5}")
    ratio = totals["sequential"] / totals["fixed"] if totals["fixed"] else 0.0
    print(
        f"\nall behaviours: fixed {totals['fixed']} pages, sequential {totals['sequential']}"
        f" ({ratio:.0%})"
    )


def error_rates(trials: int, budget: int = 25) -> None:
    """Shares judged trusted and untrusted, by true agreement, fixed vs sequential."""
    from auditor.scorer import ScoreInputs, score
    from tests.scorer.helpers import NOW, dispersion, page, spread_entries

    analysis = dispersion(spread_entries(count=200))
    rng = random.Random(1)
    print(f"\nafter up to {budget} pages, {trials} trials each: share trusted / untrusted")
    print(f"{'agreement p':<12} {'fixed':>13} {'sequential':>13} {'pages (seq.)':>13}")
    for p in (0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0):
        counts = {"fixed": [0, 0], "sequential": [0, 0]}
        pages_used = 0
        for _ in range(trials):
            wrong = -40 * 86_400
            pages = [page(i, dm_offset=0.0 if rng.random() < p else wrong) for i in range(budget)]
            for mode, n in (("fixed", budget), ("sequential", _stop(pages, analysis))):
                verdict = score(ScoreInputs("s", NOW, {}, True, analysis, pages[:n])).verdict
                counts[mode][0] += verdict == "trusted"
                counts[mode][1] += verdict == "untrusted"
                pages_used += n if mode == "sequential" else 0
        cells = [f"{t / trials:.3f}/{u / trials:.3f}" for t, u in counts.values()]
        print(f"{p:<12} {cells[0]:>13} {cells[1]:>13} {pages_used / trials:>13.1f}")


def _stop(pages: list, analysis: object) -> int:
    """How many of ``pages`` sequential sampling fetches before its sub-sitemap is decided."""
    from auditor.scorer import ScoreInputs, sampling_status
    from auditor.scorer.doubt import DECIDED
    from tests.scorer.helpers import NOW

    for n in range(1, len(pages) + 1):
        inputs = ScoreInputs("s", NOW, {}, True, analysis, pages[:n])  # type: ignore[arg-type]
        if sampling_status(inputs).get("spread.xml") == DECIDED:
            return n
    return len(pages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3, help="0: the error rates only")
    parser.add_argument("--error-rates", type=int, default=0, metavar="TRIALS")
    args = parser.parse_args()
    if args.runs:
        compare(args.sample, args.runs)
    if args.error_rates:
        error_rates(args.error_rates)


if __name__ == "__main__":
    main()
