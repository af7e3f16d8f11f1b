"""The fleet page's chart: how many sites held each verdict at the end of each day, as a
stacked area in the reports' verdict colours, drawn to PNG bytes in memory.

Touches: nothing.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from datetime import date

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from auditor.report.charts import VERDICT_COLOURS
from auditor.scorer.result import VERDICTS

__all__ = ["draw_verdicts_over_time"]

_SIZE = (8.8, 2.6)  # inches: the page's width at 100 dpi
_DPI = 100


def draw_verdicts_over_time(days: Sequence[tuple[date, dict[str, int]]]) -> bytes:
    """A PNG of ``days`` (each day and its sites by verdict), one band per verdict."""
    figure = Figure(figsize=_SIZE, dpi=_DPI)
    figure.subplots_adjust(left=0.08, right=0.78, bottom=0.15, top=0.92)
    axis = figure.add_subplot()
    shown = [v for v in VERDICTS if any(counts.get(v) for _, counts in days)]
    if days and shown:
        # each day's counts hold through that day: the last one is drawn to its end
        x = np.array([day for day, _ in days], dtype="datetime64[D]")
        x = np.append(x, x[-1] + 1)
        bands = [[counts.get(v, 0) for _, counts in days] for v in shown]
        bands = [band + band[-1:] for band in bands]
        axis.stackplot(
            x, bands, labels=shown, colors=[VERDICT_COLOURS[v] for v in shown], step="post"
        )
        axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=9)
        axis.set_ylim(bottom=0)
    axis.set_ylabel("sites")
    axis.spines[["top", "right"]].set_visible(False)
    figure.autofmt_xdate()
    buffer = io.BytesIO()
    FigureCanvasAgg(figure)
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
