"""A few URLs are read in Python, many in pyarrow: both readings give the same bases,
template codes, first segments, date depths, groups and labels, on random and hostile URLs.

Touches: nothing.
"""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from auditor.dispersion import templates
from auditor.dispersion.groups import find_groups
from auditor.dispersion.templates import FEW_URLS, UrlList

ORIGINS = ["https://a.example", "http://a.example", "https://b.example:8443", "", "//a.example"]
BASES = ["/", "/blog/", "/blog/en/", "/a b/", "/é/", "/(x)/", "/a\\d/"]
SEGMENTS = [
    "2020", "1999", "1899", "2100", "20201", "٢٠٢٠", "20٢٠", "2020\n", "\n2020", "posts", "tags",
    "index.html", "index.php", "INDEX.HTML", "", "page", "é", "a?b", "a#b", "x y", "%2F",
]  # fmt: skip
TAILS = [
    "", "/", "/05/", "/05/03/slug/", "/5/3/", "/٠٥/", "/page/2", "/page/2/", "/page/2/?x=1",
    "/page/2#top", "/page/2\n", "/page/٢/", "/page/x/", "/slug", "?page/2", "/05/03/\n",
]  # fmt: skip


def _url(rng: random.Random) -> str:
    if rng.random() < 0.03:
        return rng.choice(["", "not a url", "mailto:x@y", "http:/x", "\n", "https://"])
    origin = rng.choice(ORIGINS)
    base = rng.choice(BASES[:3]) if rng.random() < 0.8 else rng.choice(BASES)
    return origin + base + rng.choice(SEGMENTS) + rng.choice(TAILS)


def _lists(count: int) -> list[list[str]]:
    rng = random.Random(36)
    shared = [[_url(rng) for _ in range(rng.randint(1, 60))] for _ in range(count)]
    # one base for every URL of a list, as a real file has: the base is then learned
    for _ in range(count):
        prefix = rng.choice(ORIGINS) + rng.choice(BASES)
        size = rng.randint(1, 60)
        shared.append([prefix + rng.choice(SEGMENTS) + rng.choice(TAILS) for _ in range(size)])
    return shared


def _in_arrow(monkeypatch: pytest.MonkeyPatch, locs: list[str]) -> UrlList:
    with monkeypatch.context() as patched:
        patched.setattr(templates, "FEW_URLS", -1)
        listed = UrlList(locs)
    assert listed.few is None
    return listed


@pytest.mark.parametrize("locs", _lists(150))
def test_python_and_pyarrow_read_a_list_alike(monkeypatch, locs):
    few, many = UrlList(locs), _in_arrow(monkeypatch, locs)
    assert few.few is not None
    assert few.common_base() == many.common_base()
    for base in {few.common_base(), *BASES}:
        codes, segments = few.template_codes(base)
        arrow_codes, arrow_segments = many.template_codes(base)
        assert codes.tolist() == arrow_codes.tolist()
        assert segments == arrow_segments.to_pylist()
        rows = np.arange(len(locs))
        for parts in (0, 1, 2):
            assert few.count_dated(rows, base, parts) == many.count_dated(rows, base, parts)


def test_the_year_and_pagination_patterns_read_ascii_digits_to_the_end_only(monkeypatch):
    locs = [
        "https://x.example/2020/a", "https://x.example/٢٠٢٠/a", "https://x.example/2020\n/a",
        "https://x.example/a/page/2", "https://x.example/a/page/2\n", "https://x.example/a/page/٢",
    ]  # fmt: skip
    codes, segments = UrlList(locs).template_codes("/")
    assert codes.tolist() == _in_arrow(monkeypatch, locs).template_codes("/")[0].tolist()
    date, page, plain = 3, 2, 4  # templates.STRUCTURAL: rest, home, page, date
    # only ASCII digits make a year or a page number; a line break after them is no end
    assert codes.tolist() == [date, plain + 1, plain + 2, page, plain + 3, plain + 3]
    assert segments == ["2020", "٢٠٢٠", "2020\n", "a"]


def test_what_is_not_a_list_of_few_texts_is_read_in_pyarrow():
    assert UrlList(["https://x.example/a"] * FEW_URLS).few is not None
    assert UrlList(["https://x.example/a"] * (FEW_URLS + 1)).few is None
    assert UrlList(["https://x.example/a", None]).few is None  # a missing loc
    assert UrlList(np.array(["https://x.example/a", float("nan")], dtype=object)).few is None
    assert UrlList(pa.array(["https://x.example/a"])).few == ["https://x.example/a"]


def _groups_of(locs: list[str], seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    seconds = 1_735_689_600 - rng.integers(1, 2_000, len(locs)) * 86_400
    by_template = {"tags": 1_735_689_600, "categories": 1_735_000_000}
    for i, loc in enumerate(locs):  # list pages share a build date
        for name, stamp in by_template.items():
            if f"/{name}/" in loc:
                seconds[i] = stamp
    return seconds, np.ones(len(locs), dtype=bool)


@pytest.mark.parametrize("seed", range(12))
def test_groups_and_labels_are_the_same_either_way(monkeypatch, seed):
    rng = random.Random(seed)
    sections = ["posts", "tags", "categories", "2020", "2021", "page", "about", "docs"]
    tails = ["/slug-{n}/", "/{n}/", "/05/0{m}/s{n}/", "/page/{m}/", "/"]
    base = rng.choice(["https://blog.example/", "https://x.example/site/"])
    locs = [
        base + rng.choice(sections) + rng.choice(tails).format(n=n, m=n % 9 + 1)
        for n in range(rng.randint(25, 200))
    ]
    seconds, dated = _groups_of(locs, seed)
    few = find_groups(locs, seconds, dated)
    with monkeypatch.context() as patched:
        patched.setattr(templates, "FEW_URLS", -1)
        many = find_groups(locs, seconds, dated)
        many_labels = many.labels(locs)
    assert few == many
    assert few.labels(locs) == many_labels
