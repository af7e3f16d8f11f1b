"""The replaying canvas: a text drawn again from its glyphs is the text matplotlib draws.

Touches: nothing.
"""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from auditor.report import agg
from auditor.report.agg import ReplayingCanvas


def _figure() -> Figure:
    figure = Figure(figsize=(3, 2), dpi=100)
    axis = figure.subplots()
    axis.set_title("lastmod over time, per sub-sitemap")
    axis.set_xlabel("month of lastmod (UTC)")
    axis.plot([0, 1, 2], [3, 1, 2])
    return figure


def _pixels(canvas: FigureCanvasAgg) -> np.ndarray:
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


def test_texts_drawn_again_are_replayed_and_give_the_same_pixels():
    figure = _figure()
    replaying = ReplayingCanvas(figure)
    first = _pixels(replaying)
    kept = dict(replaying.get_renderer().texts)
    again = _pixels(replaying)

    assert np.array_equal(first, again)
    assert np.array_equal(first, _pixels(FigureCanvasAgg(_figure())))
    assert len(kept) >= 3  # the title, the label, the tick labels at least
    assert replaying.get_renderer().texts.keys() == kept.keys()  # nothing drawn anew


def test_a_text_replayed_takes_the_colour_and_place_of_the_time():
    figure = _figure()
    replaying = ReplayingCanvas(figure)
    _pixels(replaying)
    figure.axes[0].title.set_color("#cf222e")  # same glyphs, new colour
    figure.axes[0].xaxis.label.set_text("week of lastmod (UTC)")  # new glyphs
    figure.subplots_adjust(left=0.3, bottom=0.3)  # the same texts at new places

    stock = _figure()
    stock.axes[0].title.set_color("#cf222e")
    stock.axes[0].xaxis.label.set_text("week of lastmod (UTC)")
    stock.subplots_adjust(left=0.3, bottom=0.3)
    assert np.array_equal(_pixels(replaying), _pixels(FigureCanvasAgg(stock)))


def test_math_text_is_drawn_anew_and_not_kept():
    figure = Figure(figsize=(3, 2), dpi=100)
    figure.text(0.1, 0.5, r"$\frac{a}{b}$ and $\sqrt{x}$")  # rules: drawn as paths too
    replaying = ReplayingCanvas(figure)
    first = _pixels(replaying)

    assert not replaying.get_renderer().texts
    assert np.array_equal(first, _pixels(replaying))


def test_the_texts_kept_are_bounded(monkeypatch):
    monkeypatch.setattr(agg, "KEPT_TEXTS", 4)
    figure = Figure(figsize=(3, 2), dpi=100)
    for n in range(10):
        figure.text(0.05, n / 10, f"text {n}")
    replaying = ReplayingCanvas(figure)
    _pixels(replaying)

    assert [key[0] for key in replaying.get_renderer().texts] == [f"text {n}" for n in range(6, 10)]


def test_a_text_drawn_from_other_than_glyph_coverage_is_not_kept():
    drawn: list[object] = []

    class Target:
        def draw_text_image(self, image, x, y, angle, gc):  # type: ignore[no-untyped-def]
            drawn.append(image)

    glyph, other = np.zeros((3, 4), np.uint8), np.zeros((3, 4, 2), np.float32)
    kept, not_kept = agg._Recorder(Target()), agg._Recorder(Target())
    kept.draw_text_image(glyph, 1, 2, 0, None)
    not_kept.draw_text_image(glyph, 1, 2, 0, None)
    not_kept.draw_text_image(other, 1, 2, 0, None)

    assert drawn == [glyph, glyph, other]  # every image drawn, kept or not
    assert kept.images is not None and len(kept.images) == 1
    assert not_kept.images is None
