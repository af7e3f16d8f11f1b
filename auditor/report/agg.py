"""An Agg canvas that draws a text it drew before, at the same place, from the same glyphs.

matplotlib (3.11) lays out and renders a text glyph by glyph in Python: about a third
of a report's CPU went to its texts. A chart kind kept between reports
(:mod:`auditor.report.charts`) draws the same title, axis labels and legend entries at
the same places each time. So this canvas's renderer records the glyph images a text
was drawn with (its calls to Agg's ``draw_text_image``), keyed by all that decides them
(the string, its position, angle and font, antialiasing, hinting), and for the same text
at the same place makes the same calls again, in the colour and clipping of the time:
the same pixels, without the layout and rendering. A text drawn by other means as well
(math text's rules) is drawn as matplotlib draws it, each time. Tick labels, which move
with the data, are mostly drawn anew; the few hundred texts last drawn are kept.

Touches: nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.backend_bases import GraphicsContextBase
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.font_manager import FontProperties
from matplotlib.text import Text

__all__ = ["ReplayingCanvas", "ReplayingRenderer"]

#: Texts whose glyph images a renderer keeps (the least recently drawn go first): a
#: chart's fixed texts are a dozen; tick labels at new places would otherwise pile up.
KEPT_TEXTS = 512

Glyphs = list[tuple[np.ndarray, Any, Any, Any]]  # image, x, y, angle: draw_text_image's


class _Recorder:
    """Stands in for Agg's renderer while a text is drawn: passes every call on, and
    keeps the glyph images drawn (``images`` None once anything else was called)."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.images: Glyphs | None = []

    def draw_text_image(self, image: Any, x: Any, y: Any, angle: Any, gc: Any) -> None:
        if self.images is not None:
            pixels = np.array(image)  # a copy, as it was drawn
            if pixels.ndim == 2 and pixels.dtype == np.uint8:
                self.images.append((pixels, x, y, angle))
            else:  # not a glyph's coverage (another matplotlib's font object): drawn anew
                self.images = None
        self.target.draw_text_image(image, x, y, angle, gc)

    def __getattr__(self, name: str) -> Any:
        self.images = None  # drawn by other means too: not to be replayed
        return getattr(self.target, name)


class ReplayingRenderer(RendererAgg):
    """Agg's renderer, drawing a text drawn before at the same place from its glyphs."""

    def __init__(self, width: float, height: float, dpi: float) -> None:
        super().__init__(width, height, dpi)  # type: ignore[no-untyped-call]
        self.texts: OrderedDict[tuple[Any, ...], Glyphs] = OrderedDict()

    def draw_text(
        self,
        gc: GraphicsContextBase,
        x: float,
        y: float,
        s: str,
        prop: FontProperties,
        angle: float,
        ismath: bool | str = False,
        mtext: Text | None = None,
    ) -> None:
        """Draw ``s`` as matplotlib does, or again from the glyphs it was drawn with."""
        key = self._key(gc, x, y, s, prop, angle, ismath, mtext)
        glyphs = self.texts.get(key)
        if glyphs is not None:
            self.texts.move_to_end(key)
            for image, left, bottom, rotation in glyphs:
                self._renderer.draw_text_image(image, left, bottom, rotation, gc)
            return
        recorder = _Recorder(self._renderer)
        self._renderer = recorder
        try:
            super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)  # type: ignore[no-untyped-call]
        finally:
            self._renderer = recorder.target
        if recorder.images is not None and not ismath:
            self.texts[key] = recorder.images
            if len(self.texts) > KEPT_TEXTS:
                self.texts.popitem(last=False)

    def _key(
        self,
        gc: GraphicsContextBase,
        x: float,
        y: float,
        s: str,
        prop: FontProperties,
        angle: float,
        ismath: bool | str,
        mtext: Text | None,
    ) -> tuple[Any, ...]:
        """All that decides a text's glyph images (its colour and clipping do not)."""
        font = (
            tuple(prop.get_family()),
            prop.get_slant(),
            prop.get_variant(),
            prop.get_weight(),
            prop.get_stretch(),
            prop.get_size(),
            prop.get_file(),
            prop.get_math_fontfamily(),
        )
        shaping = (
            None
            if mtext is None
            else (repr(_call(mtext, "get_fontfeatures")), _call(mtext, "get_language"))
        )
        hinting = (mpl.rcParams["text.hinting"], mpl.rcParams["text.hinting_factor"])
        return (s, x, y, angle, ismath, font, gc.get_antialiased(), shaping, hinting, self.dpi)


def _call(text: Text, method: str) -> Any:
    """``text.method()``, or None where this matplotlib has no such method."""
    found = getattr(text, method, None)
    return None if found is None else found()


class ReplayingCanvas(FigureCanvasAgg):
    """An Agg canvas drawing with a :class:`ReplayingRenderer`, kept while the figure's
    size and resolution stay."""

    def get_renderer(self) -> RendererAgg:
        """The renderer for the figure as it is now."""
        width, height = self.get_width_height(physical=True)
        key = (width, height, self.figure.dpi)
        kept: tuple[Any, ReplayingRenderer] | None = getattr(self, "_replaying", None)
        if kept is None or kept[0] != key:
            kept = (key, ReplayingRenderer(width, height, self.figure.dpi))
            self._replaying = kept
        self.renderer = kept[1]
        return kept[1]
