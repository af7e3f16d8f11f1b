"""Crawl plans: binary freshness of auditor's plan against four baselines, one budget.

Run by hand, never by pytest:
    python3 tests/benchmarks/bench_plan.py            # 24 sites x 240 pages, 28 days
    python3 tests/benchmarks/bench_plan.py --quick    # 14 sites x 120 pages, 21 days
    python3 tests/benchmarks/bench_plan.py --policies uniform,naive,oracle,upper

The world (:mod:`tests.benchmarks.planbench.world`): a fleet of simulated sites, every
lastmod behaviour of the demo (accurate, date-only, generation time, no lastmod, frozen,
bumping, mixed), each served on its own 127.0.x.y address on one simulated clock. Every
page changes at Poisson moments drawn up front from ``--seed`` (rates from a
heavy-tailed mix), so every policy meets the same changes.

The five policies share the per-host daily ``--budget`` and the fetch model
(:mod:`tests.benchmarks.planbench.policies`): a copy of every page fetched one hour
before day 0 (outside the budget), then each day a plan at 00:05 UTC and the day's
fetches at evenly spaced instants over the rest of the day.

- ``uniform``: round-robin over each site's pages;
- ``naive``: the pages whose lastmod is newer than their last fetch, newest first, ties at
  random, the rest of the budget round-robin;
- ``auditor``: ``auditor.plan`` each day, its due items fetched over HTTP and fed back with
  ``auditor.record_fetches`` (bodies included), every site audited on days 0, 7, 14, 21;
  without the plan API in this checkout, the audits alone run and are printed;
- ``oracle``: each page's true rate, Cho and Garcia-Molina's optimal revisit frequencies;
- ``upper``: a fetch right after each change while the day's budget lasts.

Binary freshness is the time-averaged share of pages whose last fetched copy is current,
computed exactly from the change events and fetch instants, over days ``--warmup`` to the
end: the first week is left out as auditor's learning time (one audit and a week of its
own fetches before its rates mean anything; round-robin's first cycle ends within it).
Exit status 1 when a target fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.planbench.auditor_policy import (  # noqa: E402
    UNAVAILABLE,
    AuditorRun,
    AuditRow,
    run_auditor,
)
from tests.benchmarks.planbench.measure import Summary, calibration, summarise  # noqa: E402
from tests.benchmarks.planbench.policies import (  # noqa: E402
    PLAN_DELAY,
    Fetches,
    Naive,
    Oracle,
    Uniform,
    run_slots,
    upper_bound,
)
from tests.benchmarks.planbench.world import (  # noqa: E402
    BEHAVIOUR_GROUPS,
    BUMP_RATE,
    DAY,
    RATE_MIX,
    World,
    make_world,
)

POLICIES = ("uniform", "naive", "auditor", "oracle", "upper")
#: Sites whose lastmod is right: auditor must be as good as taking it at its word.
RIGHT = ("accurate", "date-only")
RIGHT_SLACK = 0.01
ORACLE_SHARE = 0.5  # elsewhere: at least this share of the oracle's gain over uniform
OVERALL_GAIN = 0.03  # overall: this much above the best of uniform and naive
QUICK = {"sites": 14, "pages": 120, "budget": 18, "days": 21}
DEFAULTS = {"sites": 24, "pages": 240, "budget": 36, "days": 28}


def describe(world: World, budget: int, warmup: int) -> None:
    """The knobs: fleet, pages, budget, rate mix, fetch model, warm-up."""
    groups = Counter(site.behaviour for site in world.sites)
    pages = sum(len(site.pages) for site in world.sites)
    rates = np.array([p.rate for site in world.sites for p in site.pages])
    per_site = rates.sum() / len(world.sites)
    print(
        f"{len(world.sites)} sites ("
        + ", ".join(f"{g} {groups[g]}" for g in BEHAVIOUR_GROUPS if groups[g])
        + f"), {pages:,} pages, {world.days} days, seed {world.seed}"
    )
    per_host = pages / len(world.sites)
    print(
        f"budget {budget} fetches per host per day ({budget / per_host:.0%} of a site's pages;"
        f" round-robin revisits every {per_host / budget:.1f} days)"
    )
    mix = ", ".join(f"{c.name} {c.share:.0%} at {c.low:.3g}-{c.high:.3g}/day" for c in RATE_MIX)
    print(f"change rates (log-uniform per class): {mix}")
    print(
        f"changes per site per day: {per_site:.1f} expected (budget {budget}); lastmod bumps"
        f" without change on bumped sections: {BUMP_RATE}/page/day"
    )
    print(
        "fetch model: every page fetched once 1 h before day 0 (outside the budget); each day"
        f" a plan at 00:{PLAN_DELAY // 60:02d} UTC, the fetches evenly spread over the rest of"
        " the day in the plan's order (the upper bound: at the change instants)"
    )
    print(f"freshness measured over days {warmup}-{world.days} (days 0-{warmup - 1}: warm-up)\n")


def run_policy(
    name: str, world: World, budget: int, folder: Path, audits: list[AuditRow]
) -> Fetches | None:
    """One policy's fetches (None: the auditor policy is not available)."""
    runners: dict[str, Callable[[], Fetches]] = {
        "uniform": lambda: run_slots(world, Uniform(world, budget), budget),
        "naive": lambda: run_slots(world, Naive(world, budget, world.seed), budget),
        "oracle": lambda: run_slots(world, Oracle(world, budget, world.seed), budget),
        "upper": lambda: upper_bound(world, budget),
    }
    if name != "auditor":
        return runners[name]()
    run: AuditorRun = run_auditor(world, budget, folder)
    audits += run.audits
    if run.fetches is None:
        print(UNAVAILABLE)
    return run.fetches


def print_table(
    title: str, rows: list[str], columns: list[str], cell: Callable[[str, str], str]
) -> None:
    """A table with a row per behaviour and a column per policy."""
    print(title)
    width = max(
        9, *(len(c) + 2 for c in columns), *(len(cell(r, c)) + 2 for r in rows for c in columns)
    )
    print(f"{'':<12}" + "".join(f"{c:>{width}}" for c in columns))
    for row in rows:
        cells = "".join(f"{cell(row, c):>{width}}" for c in columns)
        print(f"{row:<12}{cells}")
    print()


def check_targets(results: dict[str, Summary], groups: list[str]) -> list[bool]:
    """Print PASS/FAIL (SKIP without the figures) per target; the outcomes checked."""
    print("targets")
    needed = {"auditor", "uniform", "naive", "oracle"}
    if not needed <= set(results):
        missing = ", ".join(sorted(needed - set(results)))
        print(f"  SKIP  every target: no figures for {missing}\n")
        return []
    fresh = {name: s.freshness for name, s in results.items()}
    a, u, n, o = (fresh[k] for k in ("auditor", "uniform", "naive", "oracle"))
    outcomes = []

    def target(ok: bool, text: str) -> None:
        outcomes.append(ok)
        print(f"  {'PASS' if ok else 'FAIL'}  {text}")

    for g in groups:
        if g in RIGHT:
            target(
                a[g] >= n[g] - RIGHT_SLACK,
                f"{g}: auditor {a[g]:.3f} >= naive {n[g]:.3f} - {RIGHT_SLACK}",
            )
            continue
        floor = u[g] + ORACLE_SHARE * (o[g] - u[g])
        target(
            a[g] - u[g] >= ORACLE_SHARE * (o[g] - u[g]),
            f"{g}: auditor {a[g]:.3f} >= uniform + {ORACLE_SHARE} x (oracle - uniform)"
            f" = {floor:.3f}",
        )
        target(
            a[g] >= n[g] and a[g] >= u[g],
            f"{g}: auditor {a[g]:.3f} >= naive {n[g]:.3f} and uniform {u[g]:.3f}",
        )
    best = max(u["overall"], n["overall"])
    target(
        a["overall"] >= best + OVERALL_GAIN,
        f"overall: auditor {a['overall']:.3f} >= best baseline {best:.3f} + {OVERALL_GAIN}",
    )
    print()
    return outcomes


def print_calibration(world: World, fetches: Fetches) -> None:
    """How auditor's p_changed predicted the changes its fetches found."""
    rows, score = calibration(world, fetches)
    if not rows:
        print("calibration: no predictions\n")
        return
    print("calibration of p_changed (auditor's fetches; changed: the true version moved)")
    print(f"{'p_changed':<12}{'fetches':>9}{'predicted':>11}{'observed':>10}")
    for r in rows:
        bucket = f"{r.low:.1f}-{r.high:.1f}"
        print(f"{bucket:<12}{r.count:>9,}{r.predicted:>11.3f}{r.observed:>10.3f}")
    total = sum(r.count for r in rows)
    base = sum(r.observed * r.count for r in rows) / total
    print(
        f"Brier score {score:.4f} (always predicting the observed share {base:.3f}:"
        f" {base * (1 - base):.4f})\n"
    )


def print_audits(audits: list[AuditRow]) -> None:
    """The weekly audits' verdicts, per site."""
    days = sorted({a.day for a in audits})
    by_site: dict[tuple[str, str], dict[int, AuditRow]] = {}
    for a in audits:
        by_site.setdefault((a.site, a.behaviour), {})[a.day] = a
    print("weekly audits: verdict (pages sampled)")
    print(
        (
            f"{'site':<22}{'behaviour':<12}" + "".join(f"{'day ' + str(d):<20}" for d in days)
        ).rstrip()
    )
    for (site, behaviour), runs in by_site.items():
        cells = "".join(
            f"{runs[d].verdict + f' ({runs[d].requested})':<20}" if d in runs else " " * 20
            for d in days
        )
        print(f"{site:<22}{behaviour:<12}{cells}".rstrip())
    print(f"audit pages fetched in all: {sum(a.requested for a in audits):,}\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", type=int, help=f"default {DEFAULTS['sites']}")
    parser.add_argument("--pages", type=int, help=f"per site, default {DEFAULTS['pages']}")
    parser.add_argument("--days", type=int, help=f"default {DEFAULTS['days']}")
    parser.add_argument(
        "--budget", type=int, help=f"per host per day, default {DEFAULTS['budget']}"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=7, help="days left out (default 7)")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--quick", action="store_true", help=f"{QUICK} unless given")
    args = parser.parse_args()
    preset = QUICK if args.quick else DEFAULTS
    knobs = {k: getattr(args, k) if getattr(args, k) is not None else v for k, v in preset.items()}
    policies = [p for p in args.policies.split(",") if p]
    unknown = set(policies) - set(POLICIES)
    if unknown:
        parser.error(f"unknown policies {sorted(unknown)}; choose among {', '.join(POLICIES)}")
    if not 0 <= args.warmup < knobs["days"]:
        parser.error("--warmup must be below --days")

    world = make_world(knobs["sites"], knobs["pages"], knobs["days"], args.seed)
    describe(world, knobs["budget"], args.warmup)
    results: dict[str, Summary] = {}
    runs: dict[str, Fetches] = {}
    audits: list[AuditRow] = []
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as folder:
        for name in policies:
            started = time.perf_counter()
            fetches = run_policy(name, world, knobs["budget"], Path(folder), audits)
            elapsed = time.perf_counter() - started
            print(f"{name}: {elapsed:.1f} s", flush=True)
            if fetches is not None:
                runs[name] = fetches
                results[name] = summarise(world, fetches, args.warmup * DAY, world.end)

    groups = [g for g in BEHAVIOUR_GROUPS if any(s.behaviour == g for s in world.sites)]
    names = list(results)
    print_table(
        "binary freshness",
        [*groups, "overall"],
        names,
        lambda row, name: f"{results[name].freshness[row]:.3f}",
    )
    print_table(
        f"fetches: per day / in {world.days} days (the seed crawl left out)",
        [*groups, "overall"],
        names,
        lambda row, name: _fetch_cell(results[name].fetches[row], world.days),
    )
    outcomes = check_targets(results, groups)
    if "auditor" in runs:
        print_calibration(world, runs["auditor"])
        notes = runs["auditor"].notes
        print("auditor's plans: " + ", ".join(f"{k} {v:,}" for k, v in notes.items()) + "\n")
    if audits:
        print_audits(audits)
    return 0 if all(outcomes) else 1


def _fetch_cell(count: int, days: int) -> str:
    return f"{count / days:,.0f} / {count:,}"


if __name__ == "__main__":
    sys.exit(main())
