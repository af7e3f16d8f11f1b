"""SeenUrls: the emitted URLs' hashes, a set and then a sorted array, against a plain set."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.walker import Walk, seen
from auditor.walker.output import write_walk_jsonl
from auditor.walker.seen import SeenUrls
from tests.loopback import FIXTURES, LoopbackServer

_HASHES = st.integers(-(2**63), 2**63 - 1) | st.integers(-5, 5)
_BATCHES = st.lists(st.tuples(st.booleans(), st.lists(_HASHES, max_size=12)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(_BATCHES, st.sampled_from([1, 2, 3, 8]))
def test_seen_urls_behave_as_a_set(batches, recent_max):
    seen.RECENT_MAX = recent_max
    try:
        urls, model = SeenUrls(), set()
        for whole, hashes in batches:
            if whole:
                distinct = set(hashes)
                new = model.isdisjoint(distinct)
                assert urls.add_all_new(distinct) is new
                if new:
                    model |= distinct
            else:
                urls.begin(hashes)
                for value in hashes:
                    assert urls.add(value) is (value not in model)
                    model.add(value)
            assert len(urls) == len(model)
    finally:
        seen.RECENT_MAX = 65_536


@pytest.mark.parametrize("site", ["fmt-dupes", "fmt-twice", "basic", "fmt-formats"])
def test_a_walk_folding_its_hashes_early_writes_the_same(site, monkeypatch):
    results = []
    with LoopbackServer(FIXTURES / "sites" / site) as server:
        for recent_max in (65_536, 2):
            monkeypatch.setattr(seen, "RECENT_MAX", recent_max)
            walk = Walk(server.origin)
            out = io.StringIO()
            count = write_walk_jsonl(walk, out)
            results.append((out.getvalue(), count, walk.problems))
    assert results[0] == results[1]
    assert results[0][1] > 2


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab%\t\n\r/:é", max_size=30))
def test_the_keys_check_told_of_no_line_break_agrees_with_the_full_check(joined):
    """``as_keys(joined, unbroken=True)`` is the caller's word that ``joined`` holds no
    tab, LF or CR: wherever that is so, it answers as the full check does."""
    if not any(c in joined for c in "\t\n\r"):
        assert seen.as_keys(joined, unbroken=True) is seen.as_keys(joined)
    else:
        assert seen.as_keys(joined) is False
