"""The group finder (auditor.dispersion.groups) on hand-made sitemaps shaped like real
generators' output, at its thresholds, on unseen URLs, and on real corpus sitemaps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.dispersion.groups import (
    MIN_GROUP_URLS,
    OTHER,
    Group,
    Grouping,
    find_groups,
)
from auditor.walker import WalkOptions
from auditor.walker.inventory import load_inventory

SITE = "https://blog.example.org"
DAY = 86_400
BUILD = 1_735_689_600  # 2025-01-01, a generator's build date


def _spread(count: int, seed: int = 1) -> list[int]:
    rng = np.random.default_rng(seed)
    return [
        int(v) for v in BUILD - rng.integers(1, 2_000, count) * DAY - rng.integers(0, DAY, count)
    ]


def _group(
    rows: Sequence[tuple[str, int | None]],
    previous: Sequence[int | None] | None = None,
) -> Grouping:
    locs = [SITE + path for path, _ in rows]
    seconds = np.array([value or 0 for _, value in rows], dtype=np.int64)
    dated = np.array([value is not None for _, value in rows], dtype=bool)
    if previous is None:
        return find_groups(locs, seconds, dated)
    before = np.array([value or 0 for value in previous], dtype=np.int64)
    return find_groups(locs, seconds, dated, before, np.array([v is not None for v in previous]))


def _sizes(grouping: Grouping) -> dict[str, tuple[int, str]]:
    return {group.pattern: (group.urls, group.basis) for group in grouping.groups}


def _hexo() -> list[tuple[str, int | None]]:
    """hexo-generator-sitemap: 71 posts with their own dates, 56 list pages at the build date."""
    posts = [
        (f"/20{10 + i % 12}/{1 + i % 12:02d}/{1 + i % 28:02d}/post-{i}/", v)
        for i, v in enumerate(_spread(71))
    ]
    lists = (
        ["/"]
        + [f"/tags/tag-{i}/" for i in range(30)]
        + [f"/categories/cat-{i}/" for i in range(10)]
        + [f"/page/{i}/" for i in range(2, 10)]
        + [f"/archives/2020/{m:02d}/" for m in range(1, 8)]
    )
    return posts + [(path, BUILD) for path in lists]


def test_hexo_posts_apart_from_the_list_pages_that_carry_the_build_date():
    grouping = _group(_hexo())
    assert _sizes(grouping) == {
        "/YYYY/MM/DD/*": (71, "url-shape"),
        "*/page/N/ + / + /archives/* + /categories/* + /tags/*": (56, "lastmod"),
    }
    lists = "*/page/N/ + / + /archives/* + /categories/* + /tags/*"
    assert grouping.label_of(SITE + "/tags/new-tag/") == lists
    assert grouping.label_of(SITE + "/tags/tag-1/page/2/") == lists
    assert grouping.label_of(SITE + "/2031/01/01/next-post/") == "/YYYY/MM/DD/*"
    assert grouping.label_of(SITE + "/about/") == OTHER


def test_hugo_posts_tags_and_categories_are_groups_by_shape():
    rows = (
        [(f"/posts/p-{i}/", v) for i, v in enumerate(_spread(60))]
        + [(f"/tags/t-{i}/", v) for i, v in enumerate(_spread(30, seed=2))]
        + [(f"/categories/c-{i}/", v) for i, v in enumerate(_spread(12, seed=3))]
        + [(f"/page/{i}/", BUILD) for i in range(2, 5)]
        + [("/", BUILD)]
    )
    assert _sizes(_group(rows)) == {
        "/posts/*": (60, "url-shape"),
        "/tags/*": (30, "url-shape"),
        "/categories/*": (12, "url-shape"),
        OTHER: (4, "url-shape"),
    }


def test_hugo_taxonomy_pages_that_moved_since_the_previous_walk_are_one_group():
    posts, tags, cats = _spread(200), _spread(60, seed=2), _spread(15, seed=3)
    rows = (
        [(f"/posts/p-{i}/", v) for i, v in enumerate(posts)]
        + [(f"/tags/t-{i}/", v + DAY) for i, v in enumerate(tags)]
        + [(f"/categories/c-{i}/", v + DAY) for i, v in enumerate(cats)]
        + [("/", BUILD)]
    )
    previous = [*posts, *tags, *cats, BUILD - DAY]
    assert _sizes(_group(rows, previous)) == {
        "/posts/*": (200, "url-shape"),
        "/ + /categories/* + /tags/*": (76, "lastmod"),
    }


def test_mkdocs_build_date_on_every_page_is_one_behaviour_not_split():
    sections = ["extensions", "extras", "faq", "about", "usage_notes"]
    rows = [("/project/", BUILD)] + [
        (f"/project/{sections[i % 5]}/p{i}/", BUILD) for i in range(46)
    ]
    grouping = _group(rows)
    assert grouping.groups == ()
    assert grouping.labels([SITE + "/project/faq/x/", SITE + "/"]) == [None, None]


def test_a_sitemap_without_lastmod_is_not_split():
    rows = [(f"/docs/d{i}/", None) for i in range(80)] + [(f"/blog/b{i}/", None) for i in range(40)]
    assert _group(rows).groups == ()


def test_a_whole_sitemap_that_moved_together_is_not_split():
    values = _spread(120)
    rows = [(f"/{'ab'[i % 2]}/x{i}/", v + 7 * DAY) for i, v in enumerate(values)]
    assert _group(rows, values).groups == ()


def test_docs_index_pages_stay_with_their_section():
    """Section indexes carry the build date, leaves their own; the indexes are a minority
    of every section, so the split is by section and each index labels with it."""
    rows: list[tuple[str, int | None]] = [("/", BUILD)]
    for section, size in (("guide", 40), ("api", 30), ("blog", 20)):
        rows.append((f"/{section}/", BUILD))
        rows += [(f"/{section}/leaf-{i}/", v) for i, v in enumerate(_spread(size, seed=size))]
    grouping = _group(rows)
    assert _sizes(grouping) == {
        "/guide/*": (41, "url-shape"),
        "/api/*": (31, "url-shape"),
        "/blog/*": (21, "url-shape"),
        OTHER: (1, "url-shape"),
    }
    assert grouping.label_of(SITE + "/api/") == "/api/*"


def test_wordpress_single_sitemap_with_month_dated_posts_and_pages():
    rows = (
        [(f"/20{15 + i % 9}/{1 + i % 12:02d}/post-{i}/", v) for i, v in enumerate(_spread(90))]
        + [(f"/category/c{i}/", BUILD) for i in range(15)]
        + [
            (f"/{name}/", v)
            for name, v in zip(("about", "contact", "shop", "faq"), _spread(4), strict=True)
        ]
    )
    assert _sizes(_group(rows)) == {
        "/YYYY/MM/*": (90, "url-shape"),
        "/category/*": (15, "url-shape"),
        OTHER: (4, "url-shape"),
    }


def test_honest_date_only_site_with_same_day_edits_is_not_split_into_noise():
    day = BUILD - 30 * DAY
    values = [day if i % 7 == 0 else v for i, v in enumerate(_spread(200))]  # 29 same-day edits
    blog = [(f"/posts/p-{i}/", v) for i, v in enumerate(values[:190])]
    flat = [(f"/page-{i}/", v) for i, v in enumerate(values[190:])]
    assert _group(blog + flat).groups == ()
    one_offs = [(f"/p-{i}/", v) for i, v in enumerate(values)]  # a flat site: no sections
    assert _group(one_offs).groups == ()


def test_pagination_is_its_own_template_wherever_it_appears():
    rows = (
        [(f"/posts/p-{i}/", v) for i, v in enumerate(_spread(60))]
        + [(f"/posts/page/{i}/", BUILD - i) for i in range(2, 12)]
        + [(f"/tags/t{i % 3}/page/{i}/", BUILD - 100 - i) for i in range(10)]
    )
    grouping = _group(rows)
    assert _sizes(grouping) == {"/posts/*": (60, "url-shape"), "*/page/N/": (20, "url-shape")}
    assert grouping.label_of(SITE + "/whatever/x/page/7/") == "*/page/N/"
    assert grouping.label_of(SITE + "/posts/page-2/") == "/posts/*"


def test_labels_of_unseen_urls_follow_the_learned_templates():
    grouping = _group(_hexo())
    unseen = [
        "https://other-host.example/tags/x/",  # the path decides, not the host
        "/categories/new/",  # relative
        "categories/new/",  # not under the base: the rest
        SITE + "/tags/?q=1",
        SITE,
    ]
    lists = "*/page/N/ + / + /archives/* + /categories/* + /tags/*"
    assert grouping.labels(unseen) == [lists, lists, OTHER, lists, OTHER]
    assert grouping.labels(np.array(unseen, dtype=object)) == grouping.labels(unseen)


def test_the_learned_base_is_kept_for_a_site_under_a_path():
    rows = [("/proj/", BUILD)] + [
        (f"/proj/{'ab'[i % 2]}/x{i}/", v if i % 2 else BUILD) for i, v in enumerate(_spread(60))
    ]
    grouping = _group(rows)
    assert grouping.base == "/proj/"
    assert _sizes(grouping) == {
        "/proj/ + /proj/a/*": (31, "lastmod"),
        "/proj/b/*": (30, "url-shape"),
    }
    assert grouping.label_of(SITE + "/b/x1/") == OTHER


def test_tiny_sitemaps_are_not_split():
    small = [(f"/a/x{i}/", BUILD) for i in range(MIN_GROUP_URLS)]
    small += [(f"/b/x{i}/", v) for i, v in enumerate(_spread(MIN_GROUP_URLS - 1))]
    assert _group(small).groups == ()
    assert _sizes(_group([*small, ("/b/last/", BUILD - DAY)])) == {
        "/a/*": (10, "url-shape"),
        "/b/*": (10, "url-shape"),
    }


@pytest.mark.parametrize("size", [10, 9])
def test_the_material_threshold_boundary(size):
    """Of 100 URLs a template needs max(MIN_GROUP_URLS, 10% of 100) = 10, else it is rest."""
    rows = [(f"/posts/p{i}/", v) for i, v in enumerate(_spread(70))]
    rows += [(f"/docs/d{i}/", v) for i, v in enumerate(_spread(size, seed=9))]
    rows += [(f"/one-off-{i}/", v) for i, v in enumerate(_spread(30 - size, seed=5))]
    expected = {"/posts/*": (70, "url-shape"), OTHER: (30 - size, "url-shape")}
    if size == 10:
        expected["/docs/*"] = (10, "url-shape")
    else:
        expected[OTHER] = (30, "url-shape")
    assert _sizes(_group(rows)) == expected


@pytest.mark.parametrize(("largest", "split"), [(89, True), (90, False)])
def test_no_split_when_one_group_holds_nine_in_ten(largest, split):
    rows = [(f"/posts/p{i}/", v) for i, v in enumerate(_spread(largest))]
    rows += [(f"/docs/d{i}/", v) for i, v in enumerate(_spread(100 - largest, seed=9))]
    assert bool(_group(rows).groups) is split


def test_group_to_dict():
    assert Group("/tags/*", 3, "url-shape").to_dict() == {
        "pattern": "/tags/*",
        "urls": 3,
        "basis": "url-shape",
    }
    assert _group(_hexo()).to_dict()["groups"][0] == {
        "pattern": "/YYYY/MM/DD/*",
        "urls": 71,
        "basis": "url-shape",
    }


_PATHS = st.sampled_from(
    ["/", "/tags/{}/", "/posts/{}/", "/2020/05/{}/", "/page/{}/", "/x{}/", "/docs/a/{}.html"]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_PATHS, st.integers(0, 40), st.integers(0, 3)), min_size=0, max_size=150))
def test_every_url_of_a_split_sitemap_gets_exactly_one_listed_label(rows):
    locs = [SITE + form.format(n) for form, n, _ in rows]
    seconds = np.array([BUILD - value * DAY for _, _, value in rows], dtype=np.int64)
    dated = np.array([value > 0 for _, _, value in rows], dtype=bool)
    grouping = find_groups(locs, seconds, dated)
    labels = grouping.labels(locs)
    assert labels == grouping.labels(list(locs))  # deterministic
    if not grouping.groups:
        assert labels == [None] * len(locs)
        return
    assert Counter(labels) == {group.pattern: group.urls for group in grouping.groups}
    assert [grouping.label_of(loc) for loc in locs[:20]] == labels[:20]


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        (
            "sitemaps/ucsd-ets+tritongpt-sitemaps/library.xml",
            {
                "/sdta/*": (214, "url-shape"),
                "/about/*": (136, "url-shape"),
                OTHER: (70, "url-shape"),
            },
        ),
        ("sitemaps/ucsd-ets+tritongpt-sitemaps/berkeley_law.xml", {}),  # no lastmod at all
        ("sitemaps/jjpanick+CS-Sitemaps/sitemap_products_1.xml", {}),  # one generation stamp
        ("sitemaps/Andrescoto487+actualidadeurovision_sitemap/sitemap_1.xml", {}),
    ],
)
def test_real_corpus_sitemaps(corpus: Path, rel: str, expected: dict[str, tuple[int, str]]):
    frame = load_inventory(str(corpus / rel), WalkOptions()).entries
    lastmod = frame["lastmod"]
    seconds = lastmod.to_numpy(dtype="datetime64[s]").astype(np.int64)
    grouping = find_groups(frame["loc"].to_numpy(dtype=object), seconds, ~lastmod.isna().to_numpy())
    assert _sizes(grouping) == expected
