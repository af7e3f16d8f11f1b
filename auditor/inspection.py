"""A first look at a target: its inventory and the dispersion of its lastmod values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from auditor.dispersion import DispersionReport, analyse, flag_codes
from auditor.walker import ProgressCallback, WalkOptions
from auditor.walker.discovery import Target
from auditor.walker.inventory import Inventory, load_inventory

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Inspection", "inspect_target"]


@dataclass(frozen=True)
class Inspection:
    """What ``auditor inspect`` found: the inventory and its analysis."""

    inventory: Inventory
    dispersion: DispersionReport

    def to_dict(self) -> dict[str, object]:
        """The ``auditor inspect --json`` object (DESIGN.md)."""
        report = self.dispersion
        return {
            "site": self.inventory.target,
            "inventory": self.inventory.summary(),
            "dispersion": report.to_dict(),
            "flags": flag_codes(report.flags),
            "segments": [s.to_dict() for s in report.segments],
            "problems": [p.to_dict() for p in self.inventory.problems],
        }


def inspect_target(
    target: str | Target,
    options: WalkOptions | None = None,
    *,
    previous: pd.DataFrame | None = None,
    on_progress: ProgressCallback | None = None,
) -> Inspection:
    """Walk ``target`` and analyse it; ``previous`` is an earlier walk's entries."""
    inventory = load_inventory(target, options, on_progress=on_progress)
    return Inspection(inventory, analyse(inventory, previous))
