"""A crawl plan on a real site's history, judged against what changed next (run by hand).

    python3 tests/benchmarks/bench_real_plan.py FOLDER XPATH --dates D1,D2,D3 \
        [--listing XPATH] [--ignore XPATH] [--base /sub/path/] [--sitemap /sub/path/sitemap.xml] \
        [--sample 50] [--seeds 1] [--budget 10000] [--tight 0.2]

FOLDER holds a site's build at three commits months apart (``v1``, ``v2``, ``v3``, from
``bench_real_site.py prepare``), ``--dates`` the three commits' instants (ISO 8601). On one
loopback server (:class:`bench_real_site.BuiltSiteServer`, its ``Date`` header on a
simulated clock set to each commit's instant):

1. ``v1`` is audited (``--sample``, sequential sampling, ``--seeds`` each a replay of its
   own), and the crawler fetches every URL its sitemaps list, bodies kept, recorded with
   :func:`auditor.record_fetches`;
2. the same for ``v2``: the crawl log holds v1→v2 evidence, the crawler's copies are v2's;
3. ``v3`` is served and :func:`auditor.plan` made at v3's instant (it walks v3's sitemaps)
   with a budget of ``--budget`` fetches (every due fetch), and again, on a copy of the
   history as it stood, with ``--tight`` of the URLs (the priorities' top-k).

The truth, for every URL v3's sitemaps list: a URL absent from v2's is new (needed);
otherwise a post (XPATH in either build) changed when its text did between v2 and v3
(:func:`bench_real_site.truth_text`), and a listing page (tag, category, home: the
teasers ``--listing`` selects) when the posts it links to did (:func:`listed_links`); a
URL with neither in either build has no truth and is left out of the figures (counted as
``no truth``).

Printed per seed: run 2's verdict per sub-sitemap, the plan's reasons, and for the plan, a
full recrawl and naive lastmod (every URL whose v3 lastmod is newer than its v2 one, or
that has a lastmod now and had none, plus the new URLs): fetches, **recall** (the share of
truly changed URLs fetched) and **waste** (the share of fetches that went to unchanged
URLs); the tight plan's recall and waste against a random pick of as many URLs and the
best any as many fetches reach; how many URLs changed v1→v2 too, among those that changed
v2→v3 and those that did not (change persisting is what rates bet on); the Brier score of
the plan's ``p_changed`` over its fetches with a truth, against that of the fetches' base
rate (a constant forecast). Over several seeds, each figure's mean and range.
"""

from __future__ import annotations

import argparse
import math
import re
import sqlite3
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import unquote, urlsplit
from urllib.request import ProxyHandler, build_opener

from lxml import etree

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import auditor  # noqa: E402
from auditor.audit import AuditOptions, audit_site  # noqa: E402
from auditor.crawl.records import FetchRecord  # noqa: E402
from auditor.demo.clock import SimulatedClock  # noqa: E402
from auditor.evidence.page import parse_html  # noqa: E402
from auditor.history import History  # noqa: E402
from auditor.planner import PlannedFetch  # noqa: E402
from auditor.sampler import SampleOptions  # noqa: E402
from tests.benchmarks.bench_real_site import BuiltSiteServer, locate, show, truth_text  # noqa: E402

_OPENER = build_opener(ProxyHandler({}))  # loopback only: no proxy from the environment


class ClockedSiteServer(BuiltSiteServer):
    """A built site whose ``Date`` header reads a simulated clock (the commit's time)."""

    clock: Callable[[], datetime] | None = None

    def wall_time(self) -> float:
        return super().wall_time() if self.clock is None else self.clock().timestamp()


def crawl(urls: Iterable[str], clock: SimulatedClock) -> list[FetchRecord]:
    """The crawler: every URL fetched from the loopback server, bodies and headers kept."""

    def fetch(url: str) -> FetchRecord:
        try:
            with _OPENER.open(url, timeout=30) as response:
                body, status, headers = response.read(), response.status, response.headers
        except HTTPError as error:
            body, status, headers = error.read(), error.code, error.headers
        except (URLError, OSError):
            return FetchRecord(url, clock.now(), None)
        return FetchRecord(url, clock.now(), status, body=body, headers=dict(headers.items()))

    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(fetch, urls))


@dataclass(frozen=True)
class Score:
    """One policy's fetches judged against the truth."""

    fetches: int  # fetches of URLs with a truth
    hits: int  # of them, to changed URLs
    changed: int  # changed URLs in all

    @property
    def recall(self) -> float:
        return self.hits / self.changed if self.changed else math.nan

    @property
    def waste(self) -> float:
        return (self.fetches - self.hits) / self.fetches if self.fetches else math.nan


def score(chosen: Iterable[str], truth: dict[str, bool]) -> Score:
    """``chosen`` URLs judged against ``truth`` (URLs without a truth left out)."""
    picked = {url for url in chosen if url in truth}
    return Score(len(picked), sum(truth[u] for u in picked), sum(truth.values()))


def truth_of(
    folder: Path,
    runs: tuple[str, str],
    before: set[str],
    after: Iterable[str],
    origin: str,
    args: argparse.Namespace,
) -> dict[str, bool]:
    """For each URL of ``after`` (listed in ``runs[1]``) with a truth: did it change since
    ``runs[0]``? A URL not in ``before`` (listed in ``runs[0]``) is new: True."""
    found: dict[str, bool] = {}
    for url in after:
        if url not in before:
            found[url] = True
            continue
        path = urlsplit(url).path if url.startswith(origin) else url
        texts = []
        for run in runs:
            file = locate(folder / run, path, args.base)
            post = truth_text(file, args.xpath, args.ignore)
            texts.append((post, listed_links(file, args.listing) if args.listing else None))
        (post_a, list_a), (post_b, list_b) = texts
        if post_a is not None or post_b is not None:
            found[url] = post_a != post_b
        elif list_a is not None or list_b is not None:
            found[url] = list_a != list_b
    return found


def listed_links(file: Path | None, items: etree.XPath) -> tuple[str, ...] | None:
    """The posts a listing page lists: the links of the elements ``items`` selects (its
    teasers), in order, each once, by path (origin, query and fragment left out), or None
    (not a listing). A teaser's text is its post's, judged on the post; the layout of a
    listing (teasers or a list of titles) is template."""
    if file is None or file.suffix not in (".html", ".htm"):
        return None
    found = items(parse_html(file.read_bytes()))
    if not found:
        return None
    links = (
        re.sub("/+", "/", unquote(urlsplit(str(href)).path)).rstrip("/")
        for item in found
        for href in item.xpath(".//a/@href")
    )
    return tuple(dict.fromkeys(link for link in links if link))


@dataclass
class Replay:
    """What one seed's replay gives the figures: the plans, and each run's listing."""

    planned: list[PlannedFetch]
    tight: list[PlannedFetch]
    k: int  # the tight plan's budget
    listed: dict[str, dict[str, object]]  # run -> URL -> lastmod
    origin: str


def replay(folder: Path, args: argparse.Namespace, seed: int) -> Replay:
    """Audit and crawl v1 then v2, then plan at v3 (module docstring)."""
    dates = [datetime.fromisoformat(d) for d in args.dates.split(",")]
    listed: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp, ClockedSiteServer(root=folder / "v1") as server:
        db, tight_db = Path(tmp) / "h.sqlite3", Path(tmp) / "tight.sqlite3"
        server.base = args.base
        with History.open(db) as history:
            for run, date in zip(("v1", "v2"), dates, strict=False):
                clock = SimulatedClock(date)
                server.root, server.clock = folder / run, clock.now
                sampling = SampleOptions(sample=args.sample, delay=0.0)
                options = AuditOptions(sample=sampling, seed=seed, clock=clock.now)
                result = audit_site(server.origin + args.sitemap, history, options)
                entries = history.latest_entries(result.site)
                assert entries is not None
                listed[run] = _lastmods(entries)
                print(f"  crawl {run}: {record_crawl(history, list(listed[run]), clock)}")
            show(result, "v2")
        _copy(db, tight_db)
        clock = SimulatedClock(dates[2])
        server.root, server.clock = folder / "v3", clock.now
        with History.open(db) as history:
            planned = list(auditor.plan(history, now=clock.now(), budget=args.budget))
            current = history.current_inventory(result.site)
            assert current is not None
            listed["v3"] = _lastmods(current[2])
        k = max(math.ceil(args.tight * len(listed["v3"])), 1)
        with History.open(tight_db) as history:
            tight = list(auditor.plan(history, now=clock.now(), budget=k))
        return Replay(planned, tight, k, listed, server.origin)


def _lastmods(entries: Any) -> dict[str, object]:
    return {str(u): lm for u, lm in zip(entries["loc"], entries["lastmod"], strict=True)}


def record_crawl(history: History, urls: list[str], clock: SimulatedClock) -> str:
    """Fetch ``urls`` and record them; the summary's counts."""
    records = crawl(urls, clock)
    s = auditor.record_fetches(history, records, now=clock.now())
    return (
        f"{s.recorded} recorded, {s.changed} changed, {s.unchanged} unchanged,"
        f" {s.unknown_change} unknown, {s.failed} failed"
    )


def _copy(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite history (its WAL included)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def _later(now: object, before: object) -> bool:
    """Is lastmod ``now`` newer than ``before`` (or present where it was absent)?"""
    if now is None or now != now:  # None or NaT
        return False
    if before is None or before != before:
        return True
    return bool(now > before)  # type: ignore[operator]


def one_seed(folder: Path, args: argparse.Namespace, seed: int) -> dict[str, float]:
    """One seed's replay judged and printed; its figures for the summary."""
    print(f"seed {seed}:")
    r = replay(folder, args, seed)
    v1, v2, v3 = (r.listed[run] for run in ("v1", "v2", "v3"))
    truth = truth_of(folder, ("v2", "v3"), set(v2), v3, r.origin, args)
    naive = [u for u, lm in v3.items() if u not in v2 or _later(lm, v2[u])]
    urls = [p.url for p in r.planned]
    print(f"  plan reasons: {dict(sorted(Counter(p.reason for p in r.planned).items()))}")
    changed = sum(truth.values())
    print(
        f"  URLs {len(v3)} (no truth {len(v3) - len(truth)}), truly changed {changed}"
        f" (new {len(set(v3) - set(v2))}), plan fetches {len(urls)}"
    )
    rows = {
        "plan": score(urls, truth),
        "full recrawl": score(v3, truth),
        "naive lastmod": score(naive, truth),
        f"plan, budget {r.k}": score([p.url for p in r.tight], truth),
    }
    for name, s in rows.items():
        print(
            f"    {name:>20}: fetches {s.fetches:>4}, hits {s.hits:>4},"
            f" recall {s.recall:.3f}, waste {s.waste:.3f}"
        )
    best = min(r.k, changed) / changed if changed else math.nan
    print(
        f"    {'budget ' + str(r.k):>20}: recall {r.k / len(v3):.3f} at random, {best:.3f} at best"
    )
    before = truth_of(folder, ("v1", "v2"), set(v1), [u for u in v2 if u in v1], r.origin, args)
    again = [before[u] for u in truth if u in before and truth[u]]
    still = [before[u] for u in truth if u in before and not truth[u]]
    print(
        f"    changed v1→v2 too: {sum(again)} of {len(again)} changed v2→v3,"
        f" {sum(still)} of {len(still)} unchanged"
    )
    judged = [(p.p_changed, truth[p.url]) for p in r.planned if p.url in truth]
    brier = sum((p - t) ** 2 for p, t in judged) / len(judged) if judged else math.nan
    base = sum(t for _, t in judged) / len(judged) if judged else math.nan
    constant = base * (1 - base)  # the Brier score of forecasting the base rate
    print(f"    Brier of p_changed, {len(judged)} fetches: {brier:.3f} (constant {constant:.3f})")
    figures = {
        f"{name} {kind}": getattr(s, kind)
        for name, s in rows.items()
        for kind in ("recall", "waste")
    }
    return {**figures, "brier": brier}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("xpath", type=etree.XPath, help="the element holding a post's text")
    parser.add_argument("--dates", required=True, help="the three commits' instants, ISO 8601")
    parser.add_argument("--listing", type=etree.XPath, help="a listing page's element")
    parser.add_argument("--ignore", type=etree.XPath, help="elements left out of the text")
    parser.add_argument("--base", default="/", help="the sub-path the site is published under")
    parser.add_argument("--sitemap", default="", help="the path the audit starts from")
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--budget", type=int, default=10_000, help="the plan's budget a day")
    parser.add_argument("--tight", type=float, default=0.2, help="the tight budget's share")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    figures = [one_seed(args.folder, args, seed) for seed in seeds]
    if len(figures) > 1:
        print(f"\nover {len(seeds)} seeds (mean, min-max):")
        for key in figures[0]:
            values = [f[key] for f in figures]
            name, mean = re.sub(r"budget \d+", "tight", key), sum(values) / len(values)
            print(f"  {name:>22}: {mean:.3f} ({min(values):.3f}-{max(values):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
