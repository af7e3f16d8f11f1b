"""Crawl plans on a real site's daily history: freshness over the pages that change.

Run by hand, never by pytest (the data is not in the repository):
    PYTHONPATH=/work/data/.pylib python3 tests/benchmarks/bench_daily.py            # 120 days
    PYTHONPATH=/work/data/.pylib python3 tests/benchmarks/bench_daily.py --days 40  # quick
    python3 tests/benchmarks/bench_daily.py --measure text   # lxml text, no trafilatura
    python3 tests/benchmarks/bench_daily.py --data /work/data/daily/caltech-libguides-2024spring

The site (:mod:`tests.benchmarks.dailybench`): the daily snapshots of a real CMS site
(``--data``, default :data:`DEFAULT_DATA`), replayed on a simulated clock: each page's
copy switches at the snapshot instants (the scrape's commit times), its sitemap lastmod
is the CMS's ``updated`` of the snapshot in force. The pages present on every day of the
window are the site. A page "changed" when its main text did (trafilatura, or lxml text
with ``--measure text``), at the instant of the first snapshot showing it; a failed load
in the data is no observation (the last good copy stays served).

The policies and the fetch model are the plan bench's (:mod:`tests.benchmarks.planbench`):
a copy of every page fetched 1 h before day 0 outside the budget, each day a plan at
00:05 UTC and ``--budget`` fetches spread over the day. ``uniform`` (round robin),
``naive`` (pages whose lastmod is newer than their copy first), ``auditor`` (``plan``
each day, the due fetches over HTTP from a loopback server of the site, fed back with
``record_fetches``; an audit every 7 days), ``oracle`` (Cho and Garcia-Molina's optimal
revisit rates for each page's true rate: its changes over the window / the window's
days) and ``upper`` (a fetch at each change while the day's budget lasts). Binary
freshness, time-averaged, exactly from change and fetch instants, from day ``--warmup``
on. Target (issue 33): over the pages that change, auditor >= uniform + half of (oracle -
uniform); exit status 1 when it fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.dailybench.auditor_run import AuditorReplay, run_auditor  # noqa: E402
from tests.benchmarks.dailybench.site import ReplaySite  # noqa: E402
from tests.benchmarks.dailybench.snapshots import (  # noqa: E402
    MEASURES,
    ReplayPage,
    Window,
    load_window,
)
from tests.benchmarks.planbench.measure import calibration, fresh_share  # noqa: E402
from tests.benchmarks.planbench.policies import (  # noqa: E402
    Fetches,
    Naive,
    Oracle,
    Uniform,
    run_slots,
    upper_bound,
)
from tests.benchmarks.planbench.world import DAY, World  # noqa: E402

DEFAULT_DATA = Path("/work/data/daily/caltech-libguides")
POLICIES = ("uniform", "naive", "auditor", "known3", "oracle", "upper")
#: ``known3`` knows from day 0 the rate of each page that changes at least this many times
#: in the window, and only the pooled rate of the others: what a learner that had already
#: told the busy pages apart could reach (a page seen to change once or twice looks, until
#: it changes, like the hundreds that never do).
KNOWN_CHANGES = 3
ORACLE_SHARE = 0.5  # issue 33: auditor gains at least half the oracle's gain over uniform
PREPARE = (
    "no daily snapshots at {data}. Prepare them (a mirror of github.com/caltechlibrary/overtime):\n"
    "  python3 /work/data/daily/prepare_caltech_libguides.py --out {data}"
    " --start 2024-10-03 --end 2025-01-30\n"
    "then run this again."
)


def describe_source(data: Path, window: Window, budget: int, warmup: int) -> None:
    """Where the data came from, and the knobs."""
    source = data / "SOURCE.txt"
    lines = source.read_text().splitlines() if source.exists() else []
    keep = [ln for ln in lines if ln.startswith(("Repository", "Site"))]
    print(f"data: {data}" + ("" if keep else " (no SOURCE.txt)"))
    for line in keep:
        print("  " + line.strip())
    commits = data / "commits.tsv"
    if commits.exists():
        rows = {r[0]: r for r in (ln.split("\t") for ln in commits.read_text().splitlines()[1:])}
        first, last = rows.get(window.days[0]), rows.get(window.days[-1])
        if first and last:
            used = len({rows[d][1] for d in window.days if d in rows})
            print(f"  commits: {first[1]} ({first[2]}) .. {last[1]} ({last[2]}), {used} distinct")
    print("  (no licence: the page files are read from there, never copied into the repository)")
    pages = window.pages
    changing = [p for p in pages if len(p.events)]
    print(
        f"window: {window.days[0]} .. {window.days[-1]} ({len(window.days)} days);"
        f" {len(pages)} pages present every day ({window.dropped} others left out)"
    )
    print(f"changed = {window.measure}")
    print(
        f"{sum(len(p.events) for p in pages)} changes on {len(changing)} pages;"
        f" {len(pages) - len(changing)} pages never change in the window;"
        f" lastmod moved {_lastmod_moves(window)} times"
    )
    print(
        f"budget {budget} fetches a day ({budget / len(pages):.1%} of the pages; round robin"
        f" revisits every {len(pages) / budget:.1f} days); freshness over days"
        f" {warmup}-{len(window.days)} (days 0-{warmup - 1}: warm-up)\n"
    )


def _lastmod_moves(window: Window) -> int:
    return sum(
        sum(1 for a, b in zip(p.lastmods, p.lastmods[1:], strict=False) if a != b)
        for p in window.pages
    )


def run_policy(
    name: str, world: World, budget: int, folder: Path
) -> tuple[Fetches | None, AuditorReplay | None]:
    """One policy's fetches, and for auditor what it planned and why."""
    if name == "uniform":
        return run_slots(world, Uniform(world, budget), budget), None  # type: ignore[arg-type]
    if name == "naive":
        return run_slots(world, Naive(world, budget, world.seed), budget), None  # type: ignore[arg-type]
    if name == "oracle":
        return run_slots(world, Oracle(world, budget, world.seed), budget), None  # type: ignore[arg-type]
    if name == "known3":
        known = Oracle(world, budget, world.seed, known=lambda r: _pool_quiet(r, world.days))
        return run_slots(world, known, budget), None  # type: ignore[arg-type]
    if name == "upper":
        return upper_bound(world, budget), None
    replay = run_auditor(world, budget, folder)
    if replay is None:
        print("auditor policy: not available in this checkout (no auditor.plan)")
        return None, None
    return replay.fetches, replay


def _pool_quiet(rates: np.ndarray, days: int) -> np.ndarray:
    """The rates ``known3`` plans on: a page's own where it changes at least
    :data:`KNOWN_CHANGES` times in ``days``, else the mean of those that do not."""
    quiet = np.rint(rates * days) < KNOWN_CHANGES
    return np.where(quiet, rates[quiet].mean() if quiet.any() else 0.0, rates)


def figures(world: World, fetches: Fetches, start: int) -> dict[str, float]:
    """Fetches in the run, the share on never-changing pages, freshness over all pages
    and over the pages that change."""
    pages = world.sites[0].pages
    fresh, fresh_changing, count, wasted = [], [], 0, 0
    for number, page in enumerate(pages):
        instants = fetches.instants[0][number]
        share = fresh_share(page.events, instants, start, world.end)
        fresh.append(share)
        run = sum(1 for s in instants if 0 <= s < world.end)
        count += run
        if len(page.events):
            fresh_changing.append(share)
        else:
            wasted += run
    return {
        "fetches": count,
        "never-changing share": wasted / count if count else 0.0,
        "freshness": float(np.mean(fresh)),
        "freshness (changing)": float(np.mean(fresh_changing)) if fresh_changing else 0.0,
    }


def print_results(results: dict[str, dict[str, float]]) -> None:
    """The policy table."""
    print(
        f"{'policy':<10}{'fetches':>9}{'to never-changing':>19}{'freshness':>11}"
        f"{'changing pages':>16}"
    )
    for name, r in results.items():
        print(
            f"{name:<10}{r['fetches']:>9,.0f}{r['never-changing share']:>19.1%}"
            f"{r['freshness']:>11.3f}{r['freshness (changing)']:>16.3f}"
        )
    print()


#: Pages that change, by their changes in the window (lower bounds of the rows).
BANDS = (1, 2, 4, 10)


def print_bands(world: World, runs: dict[str, Fetches], start: int) -> None:
    """Freshness of the pages that change, by how often they change, per policy: where
    a policy loses to the oracle."""
    pages = world.sites[0].pages
    names = list(runs)
    print("pages that change, by changes in the window: pages, fetches a page, freshness")
    print(f"  {'changes':<9}{'pages':>6}" + "".join(f"{n:>18}" for n in names))
    for low, high in zip(BANDS, (*BANDS[1:], 10**9), strict=True):
        band = [i for i, p in enumerate(pages) if low <= len(p.events) < high]
        if not band:
            continue
        cells = []
        for name in names:
            instants = runs[name].instants[0]
            fetched = np.mean([sum(1 for s in instants[i] if 0 <= s < world.end) for i in band])
            fresh = np.mean([fresh_share(pages[i].events, instants[i], start, world.end)
                             for i in band])  # fmt: skip
            cells.append(f"{fetched:>9.1f} {fresh:>7.3f} ")
        label = f"{low}+" if high > 10**8 else f"{low}-{high - 1}" if high - low > 1 else f"{low}"
        print(f"  {label:<9}{len(band):>6}" + "".join(f"{c:>18}" for c in cells))
    print()


def check_target(results: dict[str, dict[str, float]]) -> bool | None:
    """PASS/FAIL of the issue's target (None: a policy missing)."""
    if not {"auditor", "uniform", "oracle"} <= set(results):
        print("target: SKIP (needs auditor, uniform and oracle)\n")
        return None
    a, u, o = (results[k]["freshness (changing)"] for k in ("auditor", "uniform", "oracle"))
    floor = u + ORACLE_SHARE * (o - u)
    ok = a >= floor
    print(
        f"target: {'PASS' if ok else 'FAIL'}  changing pages: auditor {a:.3f} >= uniform {u:.3f}"
        f" + {ORACLE_SHARE} x (oracle {o:.3f} - uniform) = {floor:.3f}"
        f"  (auditor reaches {(a - u) / (o - u) if o > u else float('nan'):.0%}"
        " of the oracle's gain)\n"
    )
    return ok


def print_auditor(world: World, replay: AuditorReplay, others: dict[str, Fetches]) -> None:
    """Why auditor fetched what it fetched, and where its fetches went."""
    pages = world.sites[0].pages
    print("auditor's plans, by reason: planned items / due today / fetched (to changing pages)")
    fetched = Counter(r for _, r in replay.fetched)
    on_changing = Counter(r for p, r in replay.fetched if len(pages[p].events))
    for reason in sorted(set(replay.planned) | set(fetched), key=lambda r: -replay.planned[r]):
        print(
            f"  {reason:<18}{replay.planned[reason]:>8,}{replay.due[reason]:>8,}"
            f"{fetched[reason]:>8,} ({on_changing[reason]:,})"
        )
    total, changing = len(replay.fetched), sum(on_changing.values())
    print(
        f"  fetched {total:,}: {changing:,} to pages that change, {total - changing:,} to pages"
        f" that never do; " + ", ".join(f"{k} {v:,}" for k, v in sorted(replay.notes.items()))
    )
    _print_spread(pages, replay)
    print(
        "  audits (day: verdict, pages sampled): "
        + ", ".join(f"{d}: {v} ({n})" for d, v, n in replay.audits)
    )
    rows, score = calibration(world, replay.fetches)  # type: ignore[arg-type]
    if rows:
        print("  p_changed  fetches  predicted  observed")
        for r in rows:
            print(
                f"  {r.low:.1f}-{r.high:.1f}  {r.count:>7,}  {r.predicted:>9.3f}"
                f"  {r.observed:>8.3f}"
            )
        print(f"  Brier score {score:.4f}")
    busiest = sorted(range(len(pages)), key=lambda i: -len(pages[i].events))[:10]
    names = ["auditor", *[n for n in ("uniform", "oracle") if n in others]]
    runs = {"auditor": replay.fetches, **others}
    print("\nthe pages that change most: changes / fetches in the run by " + ", ".join(names))
    for i in busiest:
        counts = " ".join(
            f"{sum(1 for s in runs[n].instants[0][i] if 0 <= s < world.end):>4}" for n in names
        )
        print(f"  {len(pages[i].events):>4} {counts}  {pages[i].path}")
    print()


def _print_spread(pages: list[ReplayPage], replay: AuditorReplay) -> None:
    """How auditor's fetches spread over the pages that change and those that never do."""
    per_page = Counter(p for p, _ in replay.fetched)
    for label, chosen in (
        ("pages that change", [i for i, p in enumerate(pages) if len(p.events)]),
        ("pages that never do", [i for i, p in enumerate(pages) if not len(p.events)]),
    ):
        counts = np.array([per_page[i] for i in chosen])
        if len(counts):
            print(
                f"  {label}: {len(chosen)}, {int((counts > 0).sum())} fetched; fetches a page"
                f" min {counts.min()}, median {np.median(counts):.0f}, max {counts.max()}"
            )
    changing = [i for i, p in enumerate(pages) if len(p.events)]
    if len(changing) > 2:
        changes = np.array([len(pages[i].events) for i in changing], dtype=float)
        fetched = np.array([per_page[i] for i in changing], dtype=float)
        ranks = [np.argsort(np.argsort(v)) for v in (changes, fetched)]
        rho = float(np.corrcoef(*ranks)[0, 1])
        print(f"  changes and fetches of the pages that change: rank correlation {rho:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--days", type=int, help="the window's first N days (default: all)")
    parser.add_argument("--budget", type=int, default=30, help="fetches a day (default 30)")
    parser.add_argument("--warmup", type=int, default=14, help="days left out (default 14)")
    parser.add_argument("--measure", choices=MEASURES, default="main")
    parser.add_argument("--policies", default=",".join(POLICIES))
    args = parser.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    if set(policies) - set(POLICIES):
        parser.error(f"choose policies among {', '.join(POLICIES)}")
    if not args.data.is_dir():
        print(PREPARE.format(data=args.data))
        return 0
    try:
        window = load_window(args.data, args.days, args.measure)
    except LookupError:
        print(
            "trafilatura does not import (PYTHONPATH=/work/data/.pylib?): changes read on lxml text"
        )
        window = load_window(args.data, args.days, "text")
    if not 0 <= args.warmup < len(window.days):
        parser.error("--warmup must be below the window's days")
    world = World([ReplaySite(window)], window.t0, len(window.days), seed=1)  # type: ignore[list-item]
    describe_source(args.data, window, args.budget, args.warmup)
    results: dict[str, dict[str, float]] = {}
    runs: dict[str, Fetches] = {}
    replay = None
    with tempfile.TemporaryDirectory(prefix="bench-daily-") as folder:
        for name in policies:
            started = time.perf_counter()
            fetches, found = run_policy(name, world, args.budget, Path(folder))
            print(f"{name}: {time.perf_counter() - started:.1f} s", flush=True)
            replay = found or replay
            if fetches is not None:
                runs[name] = fetches
                results[name] = figures(world, fetches, args.warmup * DAY)
    print()
    print_results(results)
    print_bands(world, runs, args.warmup * DAY)
    ok = check_target(results)
    if replay is not None:
        print_auditor(world, replay, {k: v for k, v in runs.items() if k != "auditor"})
    return 1 if ok is False else 0


if __name__ == "__main__":
    sys.exit(main())
