"""PNG charts with matplotlib (Agg, no display): titled, labelled with units, dates readable.

Each function draws one chart from the data :mod:`auditor.report.data` shapes, saves
it in a folder and returns its file name, or None when there is nothing to draw.

Every chart has margins of its own, fixed in inches for the labels it carries, rather
than ``tight_layout``: that measures every text on the figure by laying it out, about a
third of a report's CPU, and a fleet draws one report a site. Figures are made without
pyplot (no figure registry to fill and empty).

Touches: the disk.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # never a window, never a display (for anything that imports pyplot)

import matplotlib.dates as mdates
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

__all__ = [
    "VERDICT_COLOURS",
    "draw_history",
    "draw_lastmod_over_time",
    "draw_sample_agreement",
    "draw_shared_values",
    "draw_signed_error",
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


def _figure(margins: Margins, size: tuple[float, float] = _SIZE) -> Figure:
    """A figure of ``size`` inches whose plotting area leaves ``margins`` inches free."""
    left, bottom, right, top = margins
    width, height = size
    figure = Figure(figsize=size)
    figure.subplots_adjust(
        left=left / width, bottom=bottom / height, right=1 - right / width, top=1 - top / height
    )
    return figure


def _title(axis: Axes, text: str) -> None:
    """Title the chart just above its plotting area. (Without a stated height matplotlib
    measures the tick labels at every draw in case some sit on top: none do here.)"""
    axis.set_title(text, y=1.0)


def _save(figure: Figure, folder: Path, name: str) -> str:
    """Draw ``figure`` and write it as an RGB PNG (the charts are opaque: no alpha
    channel to filter and compress), at zlib level 2: half the encoding time of
    ``savefig``'s RGBA at level 6, for files of about the same size."""
    figure.set_dpi(_DPI)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()  # type: ignore[no-untyped-call]
    rgba = canvas.buffer_rgba()  # type: ignore[no-untyped-call]
    pixels = Image.frombuffer("RGBA", canvas.get_width_height(), rgba)
    pixels.convert("RGB").save(folder / name, format="png", compress_level=2)
    return name


def _date_axis(axis: Axes) -> None:
    locator = mdates.AutoDateLocator(minticks=3, maxticks=8)  # type: ignore[no-untyped-call]
    axis.xaxis.set_major_locator(locator)
    axis.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]


def draw_lastmod_over_time(table: pd.DataFrame, folder: Path) -> str | None:
    """URLs per month of lastmod, one line per sub-sitemap."""
    if table.empty:
        return None
    figure = _figure(_COUNT_AND_DATES)
    axis = figure.subplots()
    unit = table.index.name or "month"
    for column in table.columns:
        axis.plot(table.index, table[column], drawstyle="steps-mid", label=str(column))
    _title(axis, "lastmod over time, per sub-sitemap")
    axis.set_xlabel(f"{unit} of lastmod (UTC)")
    axis.set_ylabel(f"URLs per {unit}")
    axis.set_ylim(bottom=0)
    _date_axis(axis)
    axis.legend(fontsize=8, loc="upper left")
    axis.grid(alpha=0.3)
    return _save(figure, folder, "lastmod_over_time.png")


def draw_shared_values(table: pd.DataFrame, folder: Path) -> str | None:
    """The most shared lastmod values, as horizontal bars."""
    if table.empty:
        return None
    figure = _figure(_SHARED_VALUES)
    axis = figure.subplots()
    labels = [pd.Timestamp(v).strftime("%Y-%m-%d %H:%M:%S") for v in table["value"]]
    axis.barh(labels[::-1], table["urls"].to_numpy()[::-1], color="#57606a")
    for y, (urls, share) in enumerate(zip(table["urls"][::-1], table["share"][::-1], strict=True)):
        axis.text(urls, y, f" {share:.0%}", va="center", fontsize=8)
    _title(axis, "Most shared lastmod values (UTC)")
    axis.set_xlabel("URLs carrying the value")
    axis.margins(x=0.12)
    return _save(figure, folder, "shared_values.png")


def draw_sample_agreement(points: pd.DataFrame, folder: Path) -> str | None:
    """Each sampled page: its lastmod against its dateModified; the diagonal is agreement."""
    if points.empty:
        return None
    figure = _figure(_DATES_BOTH)
    axis = figure.subplots()
    for credible, colour, label in (
        (True, "#1a7f37", "credible"),
        (False, "#cf222e", "not credible"),
    ):
        chosen = points[points["credible"] == credible]
        if not chosen.empty:
            x = pd.to_datetime(chosen["date_modified"], utc=True)
            y = pd.to_datetime(chosen["lastmod"], utc=True)
            axis.scatter(x, y, s=18, color=colour, alpha=0.75, label=f"dateModified {label}")
    both = pd.concat([pd.to_datetime(points[c], utc=True) for c in ("lastmod", "date_modified")])
    low, high = both.min(), both.max()
    axis.plot(
        pd.DatetimeIndex([low, high]),
        pd.DatetimeIndex([low, high]),
        color="#57606a",
        linewidth=1,
        label="lastmod = dateModified",
    )
    _title(axis, "Sampled pages: lastmod against the page's own dateModified")
    axis.set_xlabel("dateModified (UTC)")
    axis.set_ylabel("sitemap lastmod (UTC)")
    _date_axis(axis)
    axis.yaxis.set_major_formatter(mdates.DateFormatter("%Y-%m-%d"))  # type: ignore[no-untyped-call]
    axis.legend(fontsize=8, loc="upper left")
    axis.grid(alpha=0.3)
    return _save(figure, folder, "sample_agreement.png")


def draw_signed_error(points: pd.DataFrame, folder: Path) -> str | None:
    """How far lastmod is from a credible dateModified, in days."""
    credible = points[points["credible"]] if not points.empty else points
    if credible.empty:
        return None
    figure = _figure(_COUNT_AND_DAYS)
    axis = figure.subplots()
    axis.hist(credible["error_days"], bins=30, color="#0969da")
    axis.axvline(0, color="#57606a", linewidth=1)
    _title(axis, "lastmod minus credible dateModified")
    axis.set_xlabel("days (> 0: lastmod later than the page says)")
    axis.set_ylabel("sampled pages")
    return _save(figure, folder, "signed_error.png")


def draw_history(points: pd.DataFrame, folder: Path) -> str | None:
    """Precision and recall across runs (with 95% intervals) above the verdict timeline."""
    if points.empty:
        return None
    figure = _figure(_HISTORY, (_SIZE[0], _SIZE[1] + 0.6))
    top, strip = figure.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    runs = list(range(len(points)))  # one step per run, however far apart in time
    labels = [
        f"run {run_id}\n{pd.Timestamp(t):%Y-%m-%d %H:%M}"
        for run_id, t in zip(points["run_id"], points["started_at"], strict=True)
    ]
    for name, colour in (("precision", "#8250df"), ("recall", "#0969da")):
        values = points[name].astype(float)
        low = values - points[f"{name}_low"].astype(float)
        high = points[f"{name}_high"].astype(float) - values
        top.errorbar(
            runs, values, yerr=[low, high], marker="o", capsize=3, color=colour, label=name
        )
    top.set_ylim(-0.05, 1.05)
    top.set_ylabel("share (95% interval)")
    _title(
        top, "Across runs: precision P(changed | lastmod advanced), recall P(advanced | changed)"
    )
    top.legend(fontsize=8, loc="lower left")
    top.grid(alpha=0.3)
    if points["precision"].isna().all() and points["recall"].isna().all():
        top.text(
            0.5,
            0.5,
            "no changes compared yet (a site's first run)",
            ha="center",
            va="center",
            transform=top.transAxes,
            color="#57606a",
        )
    colours = [VERDICT_COLOURS.get(v, "#000000") for v in points["verdict"]]
    strip.scatter(runs, [0] * len(runs), s=160, color=colours, marker="s")
    for run, verdict in zip(runs, points["verdict"], strict=True):
        strip.annotate(
            verdict, (run, 0), xytext=(0, 10), textcoords="offset points", ha="center", fontsize=8
        )
    strip.set_yticks([])
    strip.set_ylabel("verdict")
    strip.set_xlabel("run (started, UTC)")
    strip.set_xticks(runs, labels, fontsize=8)
    strip.set_xlim(-0.5, len(runs) - 0.5)
    return _save(figure, folder, "history.png")
