"""The plan bench's world and baselines (tests/benchmarks/planbench): what its figures
rest on, checked on small cases."""

from __future__ import annotations

import re
import urllib.request
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import numpy as np
import pytest

import auditor
from auditor.demo.clock import SimulatedClock
from tests.benchmarks.planbench.auditor_policy import run_auditor
from tests.benchmarks.planbench.measure import calibration, fresh_share, summarise
from tests.benchmarks.planbench.policies import (
    Naive,
    Oracle,
    Uniform,
    allocate,
    plan_instant,
    run_slots,
    slot_instants,
    upper_bound,
)
from tests.benchmarks.planbench.server import serve_world
from tests.benchmarks.planbench.world import DAY, SPECS, World, make_world

T0 = datetime(2026, 1, 5, tzinfo=UTC)
NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}


def _world(sites: int = 7, pages: int = 40, days: int = 7, seed: int = 5) -> World:
    return make_world(sites, pages, days, seed, t0=T0)


def test_events_are_reproducible_from_a_seed():
    first, again, other = _world(), _world(), _world(seed=6)
    for a, b in zip(first.sites, again.sites, strict=True):
        assert [p.rate for p in a.pages] == [p.rate for p in b.pages]
        for p, q in zip(a.pages, b.pages, strict=True):
            assert np.array_equal(p.events, q.events) and np.array_equal(p.bumps, q.bumps)
            assert (p.created, p.structured) == (q.created, q.structured)
    assert [p.rate for p in first.sites[0].pages] != [p.rate for p in other.sites[0].pages]
    page = first.sites[0].pages[0]
    assert np.all(np.diff(page.events) > 0) and page.events[0] > page.created


def test_the_oracle_spends_the_budget_and_skips_the_pages_it_cannot_keep_fresh():
    rates = np.array([0.001, 0.01, 0.05, 0.1, 0.3, 0.5, 1.0, 3.0, 20.0, 50.0, 200.0])
    budget = 2.0
    frequencies, mu = allocate(rates, budget)
    assert frequencies.sum() == pytest.approx(budget, rel=1e-6)
    skipped = mu * rates >= 1
    assert skipped.any() and not skipped.all()  # the fastest pages are given up
    assert np.all(frequencies[skipped] == 0) and np.all(frequencies[~skipped] > 0)
    x = rates[~skipped] / frequencies[~skipped]
    assert 1 - (1 + x) * np.exp(-x) == pytest.approx(mu * rates[~skipped], rel=1e-6)

    def freshness(f: np.ndarray) -> float:
        visited = f > 0
        y = rates[visited] / f[visited]
        return float(((1 - np.exp(-y)) / y).sum())

    even = np.full(len(rates), budget / len(rates))
    assert freshness(frequencies) > freshness(even)
    for step in (0.01, -0.01):  # no small move of budget between two visited pages helps
        moved = frequencies.copy()
        moved[2] += step
        moved[5] -= step
        assert freshness(moved) <= freshness(frequencies) + 1e-12


def test_freshness_of_a_hand_made_case():
    # changes at 10 and 50, fetches at 0, 30, 60: fresh on [0,10), [30,50), [60,100)
    assert fresh_share(np.array([10, 50]), [0, 30, 60], 0, 100) == pytest.approx(0.7)
    # no copy before the first fetch; a fetch at a change's instant holds the change
    assert fresh_share(np.array([10]), [40], 0, 100) == pytest.approx(0.6)
    assert fresh_share(np.array([30]), [0, 30], 0, 60) == pytest.approx(1.0)
    # the window: [20, 80) of the first case is fresh on [30,50) and [60,80)
    assert fresh_share(np.array([10, 50]), [0, 30, 60], 20, 80) == pytest.approx(40 / 60)


def test_the_upper_bound_beats_the_oracle_which_beats_round_robin():
    world = _world(sites=14, pages=80, days=14)
    budget = 12
    found = {
        name: summarise(world, fetches, 7 * DAY, world.end).freshness["overall"]
        for name, fetches in (
            ("uniform", run_slots(world, Uniform(world, budget), budget)),
            ("oracle", run_slots(world, Oracle(world, budget, 1), budget)),
            ("upper", upper_bound(world, budget)),
        )
    }
    assert found["upper"] > found["oracle"] > found["uniform"], found


def test_every_policy_keeps_to_the_budget_and_the_slots():
    world = _world(days=3)
    budget = 6
    slots = {s for day in range(world.days) for s in slot_instants(day, budget)}
    for policy in (Uniform(world, budget), Naive(world, budget, 1), Oracle(world, budget, 1)):
        fetches = run_slots(world, policy, budget)
        for site in fetches.instants:
            during = [s for page in site for s in page if s >= 0]
            assert set(during) <= slots
            for day in range(world.days):
                assert sum(plan_instant(day) <= s < plan_instant(day + 1) for s in during) == budget
    ahead = upper_bound(world, budget)
    for site in ahead.instants:
        for day in range(world.days):
            count = sum(plan_instant(day) <= s < plan_instant(day + 1) for p in site for s in p)
            assert count <= budget


def test_naive_fetches_what_lastmod_says_changed_newest_first():
    world = _world(pages=200, days=3)
    budget = 20
    fetches = run_slots(world, Naive(world, budget, 1), budget)
    for index, site in enumerate(world.sites):
        if site.spec.name not in ("accurate-jsonld", "accurate-plain"):
            continue
        start, stop = plan_instant(1), plan_instant(2)
        last = [max(s for s in page if s < start) for page in fetches.instants[index]]
        newer = [
            (site.lastmod_at(i, start) or 0, i)
            for i in range(len(site.pages))
            if (site.lastmod_at(i, start) or 0) > last[i]
        ]
        expected = {i for _, i in sorted(newer, reverse=True)[:budget]}
        fetched = {
            i for i, page in enumerate(fetches.instants[index]) for s in page if start <= s < stop
        }
        assert expected and expected <= fetched


def _sitemaps(origin: str) -> list[ET.Element]:
    root = ET.fromstring(_get(origin + "/sitemap.xml"))
    if root.tag.endswith("sitemapindex"):
        return [ET.fromstring(_get(loc.text or "")) for loc in root.findall("s:sitemap/s:loc", NS)]
    return [root]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:
        return bytes(response.read())


def _lastmods(origin: str) -> dict[str, str | None]:
    found = {}
    for urlset in _sitemaps(origin):
        for url in urlset.findall("s:url", NS):
            loc, lastmod = url.find("s:loc", NS), url.find("s:lastmod", NS)
            path = (loc.text or "").removeprefix(origin)
            found[path] = None if lastmod is None else lastmod.text
    return found


def test_a_loopback_site_serves_the_lastmod_its_behaviour_promises():
    world = make_world(len(SPECS), 60, 7, 2, t0=T0)
    now = 3 * DAY + 4_321
    clock = SimulatedClock(world.at(now))
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    with serve_world(world, clock.now) as servers:
        clock.advance(world.at(now) - clock.now())
        for site, server in zip(world.sites, servers, strict=True):
            assert server.host == site.host and server.host.startswith("127.")
            said = _lastmods(server.origin)
            assert set(said) == {p.path for p in site.pages}
            for section, behaviour in site.spec.sections.items():
                pages = [p for p in site.pages if p.section == section]
                text = [said[p.path] for p in pages]
                modified = [site.at(p.modified_at(now)) for p in pages]
                mode = behaviour.lastmod
                if mode is None:
                    assert text == [None] * len(pages)
                elif mode == "exact":
                    assert text == [m.strftime(stamp) for m in modified]
                elif mode == "date":
                    assert text == [m.strftime("%Y-%m-%d") for m in modified]
                elif mode == "generation":
                    moments = {datetime.strptime(t or "", stamp).replace(tzinfo=UTC) for t in text}
                    assert all(abs(m - world.at(now)) <= timedelta(seconds=2) for m in moments)
                elif mode == "frozen":
                    frozen = [site.at(p.modified_at(0)).strftime(stamp) for p in pages]
                    assert text == frozen
                    assert any(
                        f != m.strftime(stamp) for f, m in zip(frozen, modified, strict=True)
                    )
                else:
                    assert mode == "bumped"
                    moments = [datetime.strptime(t or "", stamp).replace(tzinfo=UTC) for t in text]
                    assert all(t >= m for t, m in zip(moments, modified, strict=True))
                    assert any(t > m for t, m in zip(moments, modified, strict=True))
        assert any(len(s.spec.sections) == 2 for s in world.sites)  # the mixed sites' index


def _main(page: bytes) -> str:
    found = re.search(rb"<main>.*</main>", page)
    assert found is not None
    return found.group(0).decode()


def test_a_page_changes_with_its_events_and_its_boilerplate_with_every_request():
    world = make_world(1, 60, 7, 3, t0=T0)
    site = world.sites[0]
    page = max(site.pages, key=lambda p: int(((p.events > 0) & (p.events < 6 * DAY)).sum()))
    change = int(page.events[np.searchsorted(page.events, DAY)])
    clock = SimulatedClock(world.at(change - 10))
    with serve_world(world, clock.now) as (server,):
        url = server.url(page.path)
        clock.advance(world.at(change - 10) - clock.now())
        before, again = _get(url), _get(url)
        clock.advance(world.at(change) - clock.now())
        after = _get(url)
        assert before != again and _main(before) == _main(again)  # template churn alone
        assert _main(after) != _main(before)
        served = server.served[-3:]
        assert [s.version for s in served] == [page.version_at(change - 10)] * 2 + [
            page.version_at(change)
        ]
        assert served[-1].instant == change
    if page.structured:
        assert site.at(change).isoformat() in after.decode()


def test_the_auditor_harness_measures_what_the_direct_path_does(monkeypatch, tmp_path):
    """A stand-in plan that asks for round-robin fetches: measured over HTTP, the same
    freshness as the round-robin baseline measured directly, to the last second."""
    world = _world(sites=3, pages=20, days=3)
    budget = 4
    pointers = [0] * len(world.sites)
    recorded = []

    def plan(history, *, sites, now, budget, horizon_days):
        assert horizon_days == 1.0 and now.tzinfo is not None
        for index, origin in enumerate(sites):
            pages = world.sites[index].pages
            for k in range(budget):
                page = pages[(pointers[index] + k) % len(pages)]
                due = now + timedelta(hours=k)
                yield SimpleNamespace(
                    url=origin + page.path, site=origin, due_at=due, priority=1.0, p_changed=0.5
                )
            pointers[index] = (pointers[index] + budget) % len(pages)

    def record_fetches(history, records, *, now):
        assert all(r.fetched_at <= now and r.body for r in records)
        recorded.extend(records)

    monkeypatch.setattr(auditor, "plan", plan, raising=False)
    monkeypatch.setattr(auditor, "record_fetches", record_fetches, raising=False)
    run = run_auditor(world, budget, tmp_path, audit_every=None, say=lambda _: None)
    assert run.fetches is not None
    direct = run_slots(world, Uniform(world, budget), budget)
    assert run.fetches.instants == direct.instants
    assert len(recorded) == 3 * 20 + 3 * budget * 3
    rows, score = calibration(world, run.fetches)
    assert sum(r.count for r in rows) == 3 * budget * 3 and 0 <= score <= 1
