"""What a sub-sitemap's lastmod says about a page having changed: a noisy indicator.

Across runs and across the crawler's fetches, auditor counts for each sub-sitemap the
fetch pairs compared, those whose content changed (C), those whose lastmod advanced (L)
and both. From them, lastmod's **recall** ``r = P(L | C)`` and its **false-alarm rate**
``φ = P(L | not C)``, each with a uniform prior (Laplace: ``(k + 1) / (n + 2)``). Given a
page's prior chance ``q`` of having changed since its copy (from its rate), Bayes gives

    P(C | L) = q r / (q r + (1 − q) φ)
    P(C | not L) = q (1 − r) / (q (1 − r) + (1 − q)(1 − φ))

- a **trusted** sub-sitemap's lastmod is, by its verdict, at least as good as the trust
  bar: ``r ≥ 0.8`` and ``φ ≤ 0.2`` (its measured figures when better), and a page whose
  lastmod advanced changed with its measured precision ``P(C | L)``, at least 0.8;
- a sub-sitemap below the bar whose lastmod is still **informative** (at least
  :data:`MIN_COMPARED` pairs, and ``r − φ`` (Youden's J) at least :data:`MIN_INFORMATION`)
  is read as the noisy indicator it is: a bumping lastmod (moves on every change and
  more) still says "unchanged" when it stays put; weighted by its measured r and φ;
- otherwise (no lastmod, the generation moment, a frozen lastmod: ``r ≈ φ``) lastmod
  says nothing, and the page's rate alone decides (``P = q``).

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from auditor.scorer.rules import TRUST_BAR

__all__ = ["MIN_COMPARED", "MIN_INFORMATION", "Signal", "signal_of"]

Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]

#: Pairs below which a lastmod below the trust bar is not read as an indicator at all.
MIN_COMPARED = 10
#: Youden's J (r − φ) below which lastmod tells too little to weigh.
MIN_INFORMATION = 0.2


@dataclass(frozen=True)
class Signal:
    """How one sub-sitemap's lastmod is read: ``mode`` ``trusted``, ``noisy`` or ``none``,
    with the recall and false-alarm rate used."""

    mode: str
    recall: float = 0.5
    false_alarm: float = 0.5
    precision: float | None = None  # P(C | L) read as is where lastmod is trusted
    verdict: str = "inconclusive"  # the sub-sitemap's verdict it was read from

    @property
    def informative(self) -> bool:
        """True when lastmod moves the odds at all."""
        return self.mode != "none"

    def posterior(self, prior: Floats, advanced: Flags) -> Floats:
        """Each page's chance of having changed, given its prior and whether its lastmod
        advanced since its copy."""
        q: Floats = np.clip(np.asarray(prior, dtype=float), 0.0, 1.0)
        if not self.informative:
            return q
        r, phi = self.recall, self.false_alarm
        with np.errstate(divide="ignore", invalid="ignore"):
            moved = q * r / (q * r + (1 - q) * phi)
            still = q * (1 - r) / (q * (1 - r) + (1 - q) * (1 - phi))
        if self.precision is not None:
            moved = np.full_like(q, self.precision)
        found: Floats = np.nan_to_num(np.where(advanced, moved, still), nan=0.0)
        return found


def signal_of(verdict: str, compared: int, changed: int, advanced: int, both: int) -> Signal:
    """The reading of a sub-sitemap's lastmod from its verdict and its counts."""
    unchanged = compared - changed
    recall = (both + 1) / (changed + 2)
    false_alarm = (advanced - both + 1) / (unchanged + 2)
    if verdict == "trusted":
        precision = max((both + 1) / (advanced + 2), TRUST_BAR)
        recall, false_alarm = max(recall, TRUST_BAR), min(false_alarm, 1 - TRUST_BAR)
        return Signal("trusted", recall, false_alarm, precision, verdict)
    if verdict == "no-lastmod" or compared < MIN_COMPARED:
        return Signal("none", verdict=verdict)
    if recall - false_alarm >= MIN_INFORMATION:
        return Signal("noisy", recall, false_alarm, verdict=verdict)
    return Signal("none", verdict=verdict)
