"""PNG charts with matplotlib (Agg, no display): titled, labelled with units, dates readable.

Each function draws one chart from the data :mod:`auditor.report.data` shapes, saves
it in a folder and returns its file name, or None when there is nothing to draw.

Every chart has margins of its own, fixed in inches for the labels it carries, rather
than ``tight_layout``: that measures every text on the figure by laying it out, about a
third of a report's CPU, and a fleet draws one report a site. Figures are made without
pyplot (no figure registry to fill and empty).

A process draws many reports (a fleet's drawers, ``auditor report --all``), so each
kind of chart keeps its figure, axes and canvas (:class:`_Surface`, one per thread) from
one report to the next: what every chart of its kind shows alike (title, fixed labels,
grid, locators, the history's legend) is set once, and each report removes the previous
one's data, limits and legend before drawing its own. Making the axes and their ticks
was about a third of a chart's CPU. The canvas kept keeps its renderer, which keeps its
measures of the texts drawn before and their glyphs
(:class:`auditor.report.agg.ReplayingCanvas`: the title, labels and legend are drawn at
the same places each time). A chart drawn so is the same image as one drawn on new axes
(tested). The PNG is written from the canvas's pixels
(:func:`auditor.report.png.png_bytes`).

Touches: the disk.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # never a window, never a display (for anything that imports pyplot)

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from auditor.report.agg import ReplayingCanvas
from auditor.report.png import png_bytes

__all__ = [
    "VERDICT_COLOURS",
    "draw_history",
    "draw_lastmod_over_time",
    "draw_sample_agreement",
    "draw_shared_values",
    "draw_signed_error",
    "prepare",
]

#: One colour per verdict, the same in charts and in the HTML.
VERDICT_COLOURS = {
    "trusted": "#1a7f37",
    "partial": "#bf8700",
    "untrusted": "#cf222e",
    "no-lastmod": "#6e7781",
    "inconclusive": "#0969da",
}
_SIZE = (8.0, 4.2)
_DPI = 110
#: Margins (left, bottom, right, top) in inches: room for the tick labels, axis labels
#: and title each chart carries. Date axes have a second line (ConciseDateFormatter's
#: offset) below the ticks.
_COUNT_AND_DATES = (0.9, 0.8, 0.2, 0.4)
_SHARED_VALUES = (1.75, 0.55, 0.2, 0.4)
_DATES_BOTH = (1.3, 0.8, 0.2, 0.4)
_COUNT_AND_DAYS = (0.8, 0.55, 0.2, 0.4)
_HISTORY = (0.9, 0.75, 0.2, 0.4)
Margins = tuple[float, float, float, float]
Axes1 = tuple[Axes]  # a chart of one plotting area
_KEPT = threading.local()  # each thread its own surfaces: a figure is drawn by one at a time


@dataclass(frozen=True)
class _Surface:
    """One kind of chart's figure, axes and canvas, kept by a thread between reports."""

    figure: Figure
    axes: tuple[Axes, ...]
    canvas: FigureCanvasAgg
    #: Whether the legend is the kind's, made with the axes and kept (else each chart's).
    fixed_legend: bool = False


def _figure(margins: Margins, size: tuple[float, float] = _SIZE) -> Figure:
    """A figure of ``size`` inches whose plotting area leaves ``margins`` inches free."""
    left, bottom, right, top = margins
    width, height = size
    figure = Figure(figsize=size, dpi=_DPI)
    figure.subplots_adjust(
        left=left / width, bottom=bottom / height, right=1 - right / width, top=1 - top / height
    )
    return figure


def _kept() -> dict[str, _Surface]:
    """This thread's surfaces, by kind of chart."""
    kept: dict[str, _Surface] = _KEPT.__dict__.setdefault("surfaces", {})
    return kept


def _surface(kind: str) -> _Surface:
    """``kind``'s surface in this thread, emptied of its last chart's data; made by its
    builder in :data:`_KINDS` (the figure and what every chart of the kind shows alike)
    the first time."""
    surface = _kept().get(kind)
    if surface is None:
        figure, axes = _KINDS[kind]()
        fixed = kind in _FIXED_LEGENDS
        surface = _kept()[kind] = _Surface(figure, axes, ReplayingCanvas(figure), fixed)
    else:
        for axis in surface.axes:
            _empty(axis, surface.fixed_legend)
    return surface


def _empty(axis: Axes, fixed_legend: bool = False) -> None:
    """``axis`` as new but for what its kind of chart set once: no data drawn, no
    legend (but a fixed one), no data limits, limits automatic again, the colour cycle
    at its start."""
    drawn = [*axis.lines, *axis.collections, *axis.patches, *axis.texts, *axis.images]
    for artist in [*drawn, *axis.artists]:
        artist.remove()
    axis.containers.clear()
    if axis.legend_ is not None and not fixed_legend:
        axis.legend_.remove()
    axis.dataLim.set_points(Bbox.null().get_points())
    axis.ignore_existing_data_limits = True
    axis.set_autoscale_on(True)
    axis.set_prop_cycle(None)


@contextmanager
def _chart(kind: str, path: Path) -> Iterator[tuple[Axes, ...]]:
    """The axes of ``kind``'s surface to draw on; drawn and written to ``path`` as a
    PNG after the block. A block that fails leaves no surface behind (the next chart of
    the kind starts on a new one)."""
    surface = _surface(kind)
    try:
        yield surface.axes
        surface.canvas.draw()  # type: ignore[no-untyped-call]
    except BaseException:
        _kept().pop(kind, None)
        raise
    path.write_bytes(png_bytes(np.asarray(surface.canvas.buffer_rgba())))  # type: ignore[no-untyped-call]


def _title(axis: Axes, text: str) -> None:
    """Title the chart just above its plotting area. (Without a stated height matplotlib
    measures the tick labels at every draw in case some sit on top: none do here.)"""
    axis.set_title(text, y=1.0)


def _date_axis(axis: Axes) -> None:
    locator = mdates.AutoDateLocator(minticks=3, maxticks=8)  # type: ignore[no-untyped-call]
    axis.xaxis.set_major_locator(locator)
    axis.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]


def _lastmod_surface() -> tuple[Figure, Axes1]:
    figure = _figure(_COUNT_AND_DATES)
    axis = figure.subplots()
    _title(axis, "lastmod over time, per sub-sitemap")
    _date_axis(axis)
    axis.grid(alpha=0.3)
    return figure, (axis,)


def draw_lastmod_over_time(table: pd.DataFrame, folder: Path) -> str | None:
    """URLs per month of lastmod, one line per sub-sitemap."""
    if table.empty:
        return None
    name = "lastmod_over_time.png"
    with _chart("lastmod", folder / name) as (axis,):
        unit = table.index.name or "month"
        for column in table.columns:
            axis.plot(table.index, table[column], drawstyle="steps-mid", label=str(column))
        axis.set_xlabel(f"{unit} of lastmod (UTC)")
        axis.set_ylabel(f"URLs per {unit}")
        axis.set_ylim(bottom=0)
        axis.legend(fontsize=8, loc="upper left")
    return name


def _shared_surface() -> tuple[Figure, Axes1]:
    figure = _figure(_SHARED_VALUES)
    axis = figure.subplots()
    _title(axis, "Most shared lastmod values (UTC)")
    axis.set_xlabel("URLs carrying the value")
    axis.margins(x=0.12)
    return figure, (axis,)


def draw_shared_values(table: pd.DataFrame, folder: Path) -> str | None:
    """The most shared lastmod values, as horizontal bars (the most shared on top)."""
    if table.empty:
        return None
    name = "shared_values.png"
    with _chart("shared", folder / name) as (axis,):
        labels = [pd.Timestamp(v).strftime("%Y-%m-%d %H:%M:%S") for v in table["value"]]
        rows = range(len(labels))  # numbered rows, not categories: nothing kept between charts
        axis.barh(rows, table["urls"].to_numpy()[::-1], color="#57606a")
        axis.set_yticks(rows, labels[::-1])
        for y, (urls, share) in enumerate(
            zip(table["urls"][::-1], table["share"][::-1], strict=True)
        ):
            axis.text(urls, y, f" {share:.0%}", va="center", fontsize=8)
    return name


def _agreement_surface() -> tuple[Figure, Axes1]:
    figure = _figure(_DATES_BOTH)
    axis = figure.subplots()
    _title(axis, "Sampled pages: lastmod against the page's own dateModified")
    axis.set_xlabel("dateModified (UTC)")
    axis.set_ylabel("sitemap lastmod (UTC)")
    _date_axis(axis)
    axis.yaxis.set_major_formatter(mdates.DateFormatter("%Y-%m-%d"))  # type: ignore[no-untyped-call]
    axis.grid(alpha=0.3)
    return figure, (axis,)


def draw_sample_agreement(points: pd.DataFrame, folder: Path) -> str | None:
    """Each sampled page: its lastmod against its dateModified; the diagonal is agreement."""
    if points.empty:
        return None
    name = "sample_agreement.png"
    with _chart("agreement", folder / name) as (axis,):
        for credible, colour, label in (
            (True, "#1a7f37", "credible"),
            (False, "#cf222e", "not credible"),
        ):
            chosen = points[points["credible"] == credible]
            if not chosen.empty:
                x = pd.to_datetime(chosen["date_modified"], utc=True)
                y = pd.to_datetime(chosen["lastmod"], utc=True)
                axis.scatter(x, y, s=18, color=colour, alpha=0.75, label=f"dateModified {label}")
        dates = [pd.to_datetime(points[c], utc=True) for c in ("lastmod", "date_modified")]
        both = pd.concat(dates)
        ends = pd.DatetimeIndex([both.min(), both.max()])
        axis.plot(ends, ends, color="#57606a", linewidth=1, label="lastmod = dateModified")
        axis.legend(fontsize=8, loc="upper left")
    return name


def _error_surface() -> tuple[Figure, Axes1]:
    figure = _figure(_COUNT_AND_DAYS)
    axis = figure.subplots()
    _title(axis, "lastmod minus credible dateModified")
    axis.set_xlabel("days (> 0: lastmod later than the page says)")
    axis.set_ylabel("sampled pages")
    return figure, (axis,)


def draw_signed_error(points: pd.DataFrame, folder: Path) -> str | None:
    """How far lastmod is from a credible dateModified, in days."""
    credible = points[points["credible"]] if not points.empty else points
    if credible.empty:
        return None
    name = "signed_error.png"
    with _chart("error", folder / name) as (axis,):
        axis.hist(credible["error_days"], bins=30, color="#0969da")
        axis.axvline(0, color="#57606a", linewidth=1)
    return name


#: The history's metrics and their colours (its legend, made once: see _history_surface).
_METRICS = (("precision", "#8250df"), ("recall", "#0969da"))


def _history_surface() -> tuple[Figure, tuple[Axes, Axes]]:
    figure = _figure(_HISTORY, (_SIZE[0], _SIZE[1] + 0.6))
    top, strip = figure.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    top.set_ylabel("share (95% interval)")
    _title(
        top, "Across runs: precision P(changed | lastmod advanced), recall P(advanced | changed)"
    )
    top.grid(alpha=0.3)
    nothing = [float("nan")]  # a run without the metric: bars and caps, drawn nowhere
    made = [
        _interval_bars(top, metric, colour, [0], nothing, [nothing, nothing])
        for metric, colour in _METRICS
    ]
    top.legend(fontsize=8, loc="lower left")  # the kind's: the same whatever is drawn
    for bars in made:
        bars.remove()
    strip.set_yticks([])
    strip.set_ylabel("verdict")
    strip.set_xlabel("run (started, UTC)")
    return figure, (top, strip)


def draw_history(points: pd.DataFrame, folder: Path) -> str | None:
    """Precision and recall across runs (with 95% intervals) above the verdict timeline."""
    if points.empty:
        return None
    name = "history.png"
    with _chart("history", folder / name) as (top, strip):
        runs = list(range(len(points)))  # one step per run, however far apart in time
        for metric, colour in _METRICS:
            values = points[metric].astype(float)
            if values.isna().all():  # nothing to draw (a site's first run)
                continue
            low = values - points[f"{metric}_low"].astype(float)
            high = points[f"{metric}_high"].astype(float) - values
            _interval_bars(top, metric, colour, runs, values, [low, high])
        top.set_ylim(-0.05, 1.05)
        if points["precision"].isna().all() and points["recall"].isna().all():
            _first_run_note(top)
        _verdict_strip(strip, runs, points)
    return name


def _interval_bars(
    axis: Axes, metric: str, colour: str, runs: Any, values: Any, interval: Any
) -> ErrorbarContainer:
    """A metric's values across runs, with their intervals (below, above)."""
    return axis.errorbar(
        runs, values, yerr=interval, marker="o", capsize=3, color=colour, label=metric
    )


def _first_run_note(axis: Axes) -> None:
    axis.text(
        0.5,
        0.5,
        "no changes compared yet (a site's first run)",
        ha="center",
        va="center",
        transform=axis.transAxes,
        color="#57606a",
    )


def _verdict_strip(strip: Axes, runs: list[int], points: pd.DataFrame) -> None:
    """One square a run in its verdict's colour, named; the runs' ids and starts below."""
    labels = [
        f"run {run_id}\n{pd.Timestamp(t):%Y-%m-%d %H:%M}"
        for run_id, t in zip(points["run_id"], points["started_at"], strict=True)
    ]
    colours = [VERDICT_COLOURS.get(v, "#000000") for v in points["verdict"]]
    strip.scatter(runs, [0] * len(runs), s=160, color=colours, marker="s")
    for run, verdict in zip(runs, points["verdict"], strict=True):
        strip.annotate(
            verdict, (run, 0), xytext=(0, 10), textcoords="offset points", ha="center", fontsize=8
        )
    strip.set_xticks(runs, labels, fontsize=8)
    strip.set_xlim(-0.5, len(runs) - 0.5)


#: Each kind of chart's builder: its figure and what every chart of the kind shows alike.
_KINDS: dict[str, Callable[[], tuple[Figure, tuple[Axes, ...]]]] = {
    "lastmod": _lastmod_surface,
    "shared": _shared_surface,
    "agreement": _agreement_surface,
    "error": _error_surface,
    "history": _history_surface,
}


#: The kinds whose legend is made with the axes and kept.
_FIXED_LEGENDS = frozenset({"history"})


def prepare() -> None:
    """Make this thread's charts and draw each once, empty (its fonts loaded, the glyphs
    of its fixed texts kept), so that a process about to draw reports draws its first
    as fast as the next. What it draws after is the same (tested)."""
    for kind in _KINDS:
        if kind not in _kept():
            _surface(kind).canvas.draw()  # type: ignore[no-untyped-call]
