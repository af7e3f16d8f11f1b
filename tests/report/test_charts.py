"""The charts' PNGs: a process that draws many reports draws each as a new process would.

Touches: the disk.
"""

from __future__ import annotations

import io
import pickle
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from auditor.audit import AuditOptions, audit_site
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from auditor.report import ReportData, load_report_data, write_site_report
from auditor.report.charts import draw_history
from auditor.report.png import png_bytes
from auditor.sampler import SampleOptions
from tests.processes import run_recording

#: Draws the pickled report data given into the folder given, in a new interpreter
#: (after preparing its charts when told so).
FRESH_PROCESS = """
import json, pickle, sys
from pathlib import Path
from auditor.report import charts, write_site_report
data = pickle.loads(Path(sys.argv[2]).read_bytes())
if sys.argv[4:] == ["prepared"]:
    charts.prepare()
write_site_report(data, Path(sys.argv[3]))
Path(sys.argv[1]).write_text(json.dumps("drawn"))
"""


@pytest.fixture(scope="module")
def two_reports(audited, tmp_path_factory) -> tuple[ReportData, ReportData]:
    """A: the mixed site audited twice (two sub-sitemaps, a change compared, samples);
    B: a date-only site audited once (one sub-sitemap, no change compared yet)."""
    database, origin, _ = audited
    with History.open(database) as history:
        first = load_report_data(history, origin)
    site = SimulatedSite(
        "dated", {"pages": BEHAVIOURS["accurate-date-microdata"]}, pages_per_section=30, seed=5
    )
    options = AuditOptions(sample=SampleOptions(sample=12, delay=0.0, sequential=False), seed=5)
    other = tmp_path_factory.mktemp("other") / "history.sqlite3"
    with SiteServer(site) as server, History.open(other) as history:
        audit_site(server.origin, history, options)
        second = load_report_data(history, server.origin)
    return first, second


def _pngs(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.png"))}


def test_a_report_drawn_after_others_is_the_same_as_in_a_new_process(two_reports, tmp_path):
    a, b = two_reports
    write_site_report(a, tmp_path / "a")
    write_site_report(b, tmp_path / "b")
    write_site_report(a, tmp_path / "a-again")
    (tmp_path / "a.pickle").write_bytes(pickle.dumps(a))
    data = str(tmp_path / "a.pickle")
    run_recording(tmp_path, FRESH_PROCESS, data, str(tmp_path / "fresh"))
    run_recording(tmp_path, FRESH_PROCESS, data, str(tmp_path / "prepared"), "prepared")

    first, again, fresh, prepared = (
        _pngs(tmp_path / name) for name in ("a", "a-again", "fresh", "prepared")
    )
    assert len(first) == 5  # every chart of the report
    assert again == first
    assert fresh == first
    assert prepared == first
    other = _pngs(tmp_path / "b")
    assert other.keys() & first.keys()
    assert all(other[name] != first[name] for name in other.keys() & first.keys())


def test_reports_drawn_in_threads_at_once_are_those_drawn_one_by_one(two_reports, tmp_path):
    a, b = two_reports
    write_site_report(a, tmp_path / "one-a")
    write_site_report(b, tmp_path / "one-b")
    failed: list[BaseException] = []

    def draw(name: str) -> None:
        try:
            for round_ in range(2):
                for label, data in (("a", a), ("b", b)):
                    write_site_report(data, tmp_path / f"{name}-{round_}-{label}")
        except BaseException as error:  # seen by the test, not lost in the thread
            failed.append(error)

    threads = [threading.Thread(target=draw, args=(f"t{n}",)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not failed
    for name in ("t0", "t1"):
        for round_ in range(2):
            for label in ("a", "b"):
                drawn = _pngs(tmp_path / f"{name}-{round_}-{label}")
                assert drawn == _pngs(tmp_path / f"one-{label}")


def test_a_chart_that_fails_halfway_leaves_the_next_one_as_new(two_reports, tmp_path):
    a, _ = two_reports
    write_site_report(a, tmp_path / "before")
    from auditor.report.data import history_points

    points = history_points(a.runs).drop(columns=["verdict"])  # fails after the error bars
    with pytest.raises(KeyError):
        draw_history(points, tmp_path)
    write_site_report(a, tmp_path / "after")

    assert _pngs(tmp_path / "after") == _pngs(tmp_path / "before")


@pytest.mark.parametrize("channels", [3, 4])
def test_a_png_holds_the_pixels_it_was_given(channels):
    rng = np.random.default_rng(channels)
    pixels = rng.integers(0, 256, size=(37, 53, channels), dtype=np.uint8)
    pixels[10:20] = 255  # flat rows, as a chart's margins

    with Image.open(io.BytesIO(png_bytes(pixels))) as decoded:
        assert decoded.mode == "RGB" and decoded.size == (53, 37)
        assert np.array_equal(np.asarray(decoded), pixels[:, :, :3])


def test_a_chart_png_is_an_opaque_rgb_image_of_the_figure_size(two_reports, tmp_path):
    a, _ = two_reports
    draw_history(pd.DataFrame(), tmp_path)  # nothing to draw: no file
    assert not list(tmp_path.glob("*.png"))
    write_site_report(a, tmp_path)

    for path in tmp_path.glob("*.png"):
        with Image.open(path) as image:
            assert image.mode == "RGB"
            assert image.size[0] == 880  # 8 inches at 110 dpi
