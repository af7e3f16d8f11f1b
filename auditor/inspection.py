"""A first look at a target: its inventory and the dispersion of its lastmod values.

Touches: the network, the disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from auditor.dispersion import DispersionReport, analyse, flag_codes
from auditor.dispersion.extensions import (
    ExtensionShares,
    extension_shares,
    publication_date_notes,
)
from auditor.walker import ProgressCallback, WalkOptions
from auditor.walker.discovery import Target
from auditor.walker.inventory import Inventory, load_inventory

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Inspection", "inspect_target", "inspection_of"]


@dataclass(frozen=True)
class Inspection:
    """What ``auditor inspect`` found: the inventory and its analysis."""

    inventory: Inventory
    dispersion: DispersionReport
    #: the site's extension counts (None: no entry carries any), and each sub-sitemap's
    extensions: ExtensionShares | None = None
    sitemap_extensions: dict[str, ExtensionShares] = field(default_factory=dict)
    #: ``publication-date-right`` notes (:mod:`auditor.dispersion.extensions`)
    notes: tuple[dict[str, object], ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The ``auditor inspect --json`` object (docs/commands/inspect.md); ``extensions``
        (site-wide, and ``by_sitemap``) and ``notes`` only where there are any."""
        report = self.dispersion
        out: dict[str, object] = {
            "site": self.inventory.target,
            "inventory": self.inventory.summary(),
            "dispersion": report.to_dict(),
            "flags": flag_codes(report.flags),
            "segments": [s.to_dict() for s in report.segments],
            "problems": [p.to_dict() for p in self.inventory.problems],
        }
        if self.extensions is not None:
            by_sitemap = {k: v.to_dict() for k, v in self.sitemap_extensions.items()}
            out["extensions"] = {**self.extensions.to_dict(), "by_sitemap": by_sitemap}
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def inspection_of(inventory: Inventory, dispersion: DispersionReport) -> Inspection:
    """The inspection of an inventory already analysed: its extensions and notes added."""
    entries = inventory.entries
    site = extension_shares(entries)
    if site is None:
        return Inspection(inventory, dispersion)
    by_sitemap = {}
    for name, part in entries.groupby("sitemap", observed=True, sort=False):
        shares = extension_shares(part)
        if shares is not None:
            by_sitemap[str(name)] = shares
    notes = publication_date_notes(dispersion, entries)
    return Inspection(inventory, dispersion, site, by_sitemap, tuple(notes))


def inspect_target(
    target: str | Target,
    options: WalkOptions | None = None,
    *,
    previous: pd.DataFrame | None = None,
    on_progress: ProgressCallback | None = None,
) -> Inspection:
    """Walk ``target`` and analyse it; ``previous`` is an earlier walk's entries."""
    inventory = load_inventory(target, options, on_progress=on_progress)
    return inspection_of(inventory, analyse(inventory, previous))
