"""The statistics the scorer stands on: Wilson intervals and a change-rate estimator.

Touches: nothing.
"""

from __future__ import annotations

import math

__all__ = ["Z_95", "agreeing_needed", "change_rate", "wilson"]

#: The normal quantile of a two-sided 95% interval.
Z_95 = 1.959963984540054


def wilson(successes: int, trials: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval of ``successes / trials``; None without trials.

    Unlike the normal approximation it stays inside [0, 1] and is honest for small
    samples: 16 successes out of 16 give a lower bound of 0.806, not 1.0.
    """
    if trials <= 0:
        return None
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    margin = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    low = 0.0 if successes == 0 else max(0.0, centre - margin)
    high = 1.0 if successes == trials else min(1.0, centre + margin)
    return low, high


def agreeing_needed(successes: int, trials: int, bar: float, limit: int = 1_000) -> int | None:
    """How many more agreeing observations would lift the Wilson lower bound of
    ``successes / trials`` to ``bar``: 0 when it is there already, None beyond ``limit``.

    12 agreeing of 12 (lower bound 0.76) need 4 more to clear 0.8: 16 of 16 give 0.806.
    """
    for more in range(limit + 1):
        interval = wilson(successes + more, trials + more)
        if interval is not None and interval[0] >= bar:
            return more
    return None


def change_rate(pages: int, changed: int, interval_days: float) -> float | None:
    """Changes per page per day from one look at ``pages`` pages ``interval_days`` apart.

    Cho and Garcia-Molina's bias-corrected estimator (2003): a page seen changed only
    says it changed at least once, so the naive changed/interval undercounts;
    ``-ln((n - X + 0.5) / (n + 0.5)) / I`` corrects for it and stays finite when
    every page changed. None without pages or time.
    """
    if pages <= 0 or interval_days <= 0:
        return None
    if changed == 0:
        return 0.0
    return -math.log((pages - changed + 0.5) / (pages + 0.5)) / interval_days
