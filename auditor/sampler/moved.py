"""Which pages' lastmod moved since the site's previous audit: the pages to check first.

A page whose lastmod moved says its content changed: re-fetching it tests lastmod's
precision (did the content change when lastmod said so?), and fetching one never fetched
lets the next run compare it. The sampler reads the answer from the entries' boolean
:data:`MOVED` column (:func:`with_moved`), as it reads their ``segment`` column.

One join of the whole inventory on ``loc`` (:func:`~auditor.dispersion.movement.align_previous`,
the lastmod movement the dispersion stage measures): no per-URL Python objects, so a
million-URL inventory costs what a hash look-up per URL costs.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from auditor.dispersion.movement import align_previous
from auditor.sampler.choose import MOVED

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MOVED", "lastmod_moved", "with_moved"]


def lastmod_moved(
    entries: pd.DataFrame,
    previous: pd.DataFrame | None,
    fetched: Iterable[tuple[str, datetime | None]] = (),
) -> np.ndarray:
    """For each row of ``entries``: its lastmod moved forward since the previous audit.

    Since the page's previous fetch when it was fetched then (``fetched``: each page's loc
    and the lastmod its observation recorded), else since the previous walk (``previous``:
    the inventory with loc and lastmod). Moved forward: later than before, or there now
    where there was none (as the scorer counts an advance across runs). A URL neither
    walked nor fetched before has not moved: it is new, nothing to compare it with.
    """
    import pandas as pd

    seen = list(fetched)
    earlier = [_frame(seen)] if seen else []  # first: align_previous keeps a URL's first row
    if previous is not None:
        earlier.append(previous[["loc", "lastmod"]])
    if not earlier:
        return np.zeros(len(entries), dtype=bool)
    before = align_previous(entries, pd.concat(earlier, ignore_index=True))
    now = pd.to_datetime(entries["lastmod"], utc=True).to_numpy(dtype="datetime64[s]")
    dated = ~np.isnat(now)
    later = dated & before.dated & (now.astype(np.int64) > before.seconds)
    appeared = dated & before.known & ~before.dated
    moved: np.ndarray = later | appeared
    return moved


def with_moved(
    entries: pd.DataFrame,
    previous: pd.DataFrame | None,
    fetched: Iterable[tuple[str, datetime | None]] = (),
) -> pd.DataFrame:
    """``entries`` with the :data:`MOVED` column (:func:`lastmod_moved`); a new frame, the
    columns shared."""
    return entries.assign(**{MOVED: lastmod_moved(entries, previous, fetched)})


def _frame(seen: list[tuple[str, datetime | None]]) -> pd.DataFrame:
    """The fetched pages as an inventory's loc and lastmod columns (NaT: no lastmod)."""
    import pandas as pd

    lastmods = pd.to_datetime(pd.Series([lastmod for _, lastmod in seen], dtype=object), utc=True)
    return pd.DataFrame({"loc": [loc for loc, _ in seen], "lastmod": lastmods})
