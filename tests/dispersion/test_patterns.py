"""Each lastmod behaviour on a loopback fixture site: the flags it raises, and those it must not."""

from __future__ import annotations

import pytest

from auditor.dispersion import flag_codes
from auditor.inspection import inspect_target

#: site folder -> the flags raised for the site as a whole
EXPECTED = {
    "disp-generation": {"generation-time", "shared-timestamp"},
    "disp-build-jitter": {"generation-time", "shared-timestamp"},  # at second resolution
    "disp-date-generation": {"generation-time", "shared-timestamp"},
    "disp-recent-days": set(),  # 40% today: neither generation time nor one shared day
    "disp-absent": {"no-lastmod"},
    "disp-accurate": set(),
    "disp-date-only": set(),
    "disp-news": set(),
    "disp-migration": set(),
    "disp-future": {"future-lastmod"},
    "disp-tiny": set(),
    "disp-invalid": {"invalid-lastmod"},
}


@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_site_flags(site, folder):
    found = inspect_target(site(folder).origin)

    assert found.inventory.readable
    assert set(flag_codes(found.dispersion.flags)) == EXPECTED[folder]
    for segment in found.dispersion.segments:  # one sub-sitemap: the same verdict
        assert set(flag_codes(segment.flags)) == EXPECTED[folder]


def test_generation_time_is_anchored_on_the_response_date(site):
    report = inspect_target(site("disp-generation").origin).dispersion

    assert report.generation.anchor == "date-header"
    assert report.generation.share == 1.0
    (flag,) = [f for f in report.flags if f.code == "generation-time"]
    assert flag.figure == 1.0
    assert flag.threshold == 0.5
    assert "Date" in flag.detail
    # two values a second apart, half each: shared too, and both figures say so
    assert report.figures.distinct_seconds == 2
    assert report.figures.top3_share == 1.0


def test_build_jitter_is_one_moment_without_a_header(site):
    report = inspect_target(site("disp-build-jitter").origin).dispersion

    assert report.figures.distinct_seconds == 2  # millisecond values over two seconds
    assert report.figures.top_share == 0.5
    assert report.generation.anchor == "newest-value"
    assert report.generation.within == 60


def test_last_modified_header_anchors_a_static_build(serve):
    from tests.loopback import send

    body = "".join(
        f"<url><loc>{{origin}}/p/{i}</loc><lastmod>2026-03-02T10:00:0{i % 3}Z</lastmod></url>"
        for i in range(30)
    )

    def static_file(handler):
        origin = f"http://127.0.0.1:{handler.server.server_address[1]}"
        xml = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>'
        headers = {"Last-Modified": "Mon, 02 Mar 2026 10:00:03 GMT"}
        send(handler, 200, xml.replace("{origin}", origin).encode(), headers=headers)

    server = serve(routes={"/sitemap.xml": static_file})
    report = inspect_target(server.url("/sitemap.xml")).dispersion

    assert report.generation.anchor == "last-modified"
    assert "generation-time" in flag_codes(report.flags)
    assert "shared-timestamp" not in flag_codes(report.flags)  # a third each: not one value


def test_mixed_site_flags_only_the_generating_sub_sitemap(site):
    server = site("disp-mixed")
    report = inspect_target(server.origin).dispersion
    by_name = {s.sitemap: set(flag_codes(s.flags)) for s in report.segments}

    assert by_name == {
        server.url("/products.xml"): {"generation-time", "shared-timestamp"},
        server.url("/blog.xml"): set(),
    }
    # 60 of 100 dated entries carry the generation moment: the site as a whole is flagged
    assert report.generation.within == 60
    assert "generation-time" in flag_codes(report.flags)


def test_migration_figures_show_the_shared_value_that_was_forgiven(site):
    report = inspect_target(site("disp-migration").origin).dispersion

    assert report.figures.top_share == pytest.approx(200 / 300)
    assert report.figures.top_value.isoformat() == "2019-03-01T00:00:00+00:00"


def test_invalid_and_implausible_are_counted_apart(site):
    figures = inspect_target(site("disp-invalid").origin).dispersion.figures

    assert figures.invalid == 3
    assert figures.implausibly_old == 2
    assert figures.urls == 40


def test_future_figure(site):
    report = inspect_target(site("disp-future").origin).dispersion

    assert report.figures.future == 10
    (flag,) = report.flags
    assert flag.figure == pytest.approx(10 / 50)
    assert flag.threshold == 0.01


def test_index_lastmods_are_kept_apart(site):
    report = inspect_target(site("basic").origin).dispersion

    assert report.index_lastmods is not None
    assert report.index_lastmods.urls == 2  # the two children of the index
    assert report.figures.urls == 6  # page entries only
