"""Dispersion analyser: what the lastmod values alone say, before any page is fetched.

Per site and per sub-sitemap: how many URLs carry a lastmod, how distinct the
values are, how many carry the file's own generation moment, how many are
unreadable, implausible or in the future, and, against an earlier walk, whether
the values moved together. Each finding is a :class:`Flag` with its figure and
threshold.

Touches: nothing.
"""

from __future__ import annotations

from auditor.dispersion.analyse import (
    DispersionReport,
    SegmentDispersion,
    analyse,
    analyse_entries,
    flag_codes,
)
from auditor.dispersion.figures import Figures, LastmodArrays, compute_figures
from auditor.dispersion.flags import Flag
from auditor.dispersion.generation import Generation
from auditor.dispersion.movement import Movement

__all__ = [
    "DispersionReport",
    "Figures",
    "Flag",
    "Generation",
    "LastmodArrays",
    "Movement",
    "SegmentDispersion",
    "analyse",
    "analyse_entries",
    "compute_figures",
    "flag_codes",
]
