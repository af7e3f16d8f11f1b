"""The groups ``find_groups`` finds on every real sitemap at hand, for review by eye.

Run by hand, never by pytest:  python3 tests/benchmarks/list_groups.py

Reads every sitemap of the shared corpus's ``sitemaps`` (each sub-sitemap of each file, read
as a local file through the walker) and the static-site builds of ``/tmp/rs/<site>/v1..v3``
(every sitemap file of each; their ``{{origin}}`` replaced by ``https://example.org``),
the latter alone and against the previous version (v1->v2, v2->v3). Prints, per
sub-sitemap, the groups: pattern,
URLs, basis, and per group the share with a lastmod, its distinct values and the top
value's share of its dated URLs. A folder that is absent is skipped.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.dispersion.groups import Grouping, find_groups
from auditor.walker import WalkOptions
from auditor.walker.inventory import load_inventory

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "sitemaps"
BUILDS = Path("/tmp/rs")
ORIGIN = "https://example.org"
SUFFIXES = (".xml", ".xml.gz", ".txt")


def _entries(path: Path) -> pd.DataFrame:
    frame = load_inventory(str(path), WalkOptions()).entries
    return frame[frame["loc"].notna()]


def _arrays(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lastmod = frame["lastmod"]
    seconds = lastmod.to_numpy(dtype="datetime64[s]").astype(np.int64)
    return frame["loc"].to_numpy(dtype=object), seconds, ~lastmod.isna().to_numpy()


def _report(title: str, frame: pd.DataFrame, previous: pd.DataFrame | None = None) -> None:
    locs, seconds, dated = _arrays(frame)
    before: tuple[np.ndarray, np.ndarray] | None = None
    if previous is not None:
        old = previous.drop_duplicates("loc").set_index("loc")["lastmod"].reindex(locs)
        before = old.to_numpy(dtype="datetime64[s]").astype(np.int64), ~old.isna().to_numpy()
    grouping = find_groups(locs, seconds, dated, *(before or (None, None)))
    print(
        f"{title}: {len(locs)} URLs, {dated.mean() if len(locs) else 0:.0%} dated, "
        f"{len(np.unique(seconds[dated]))} distinct, top {_top(seconds[dated]):.0%}"
        + ("" if grouping.groups else " -> no split")
    )
    _print_groups(grouping, locs, seconds, dated, before)


def _top(values: np.ndarray) -> float:
    if not len(values):
        return 0.0
    return float(np.unique(values, return_counts=True)[1].max() / len(values))


def _print_groups(
    grouping: Grouping,
    locs: np.ndarray,
    seconds: np.ndarray,
    dated: np.ndarray,
    before: tuple[np.ndarray, np.ndarray] | None,
) -> None:
    labels = np.array(grouping.labels(locs), dtype=object)
    for group in grouping.groups:
        rows = labels == group.pattern
        values = seconds[rows & dated]
        moved = ""
        if before is not None:
            both = rows & dated & before[1]
            moved = f"  moved {int((seconds[both] != before[0][both]).sum())}/{int(both.sum())}"
        print(
            f"    {group.pattern:48} {group.urls:6} {group.basis:9} dated {dated[rows].mean():4.0%}"
            f"  distinct {len(np.unique(values)):4}  top {_top(values):4.0%}{moved}"
        )


def _corpus() -> None:
    if not CORPUS.is_dir():
        print(f"(no corpus at {CORPUS})")
        return
    for path in sorted(CORPUS.rglob("*")):
        if not path.name.endswith(SUFFIXES) or path.name == "robots.txt":
            continue
        frame = _entries(path)
        for sitemap, part in frame.groupby("sitemap", observed=True, sort=True):
            if len(part):
                _report(f"{path.relative_to(CORPUS)} [{Path(str(sitemap)).name}]", part)


def _builds() -> None:
    sites = sorted(d.name for d in BUILDS.iterdir() if d.is_dir()) if BUILDS.is_dir() else []
    for site in sites:
        previous: dict[str, tuple[str, pd.DataFrame]] = {}
        for version in ("v1", "v2", "v3"):
            for source in _sitemaps(BUILDS / site / version):
                name = f"{site} {source.relative_to(BUILDS / site / version)}"
                with tempfile.TemporaryDirectory() as folder:
                    local = Path(folder) / "sitemap.xml"
                    text = source.read_text(encoding="utf-8", errors="replace")
                    local.write_text(text.replace("{{origin}}", ORIGIN))
                    frame = _entries(local)
                if frame.empty:
                    continue  # an index: its children are listed on their own
                _report(f"{name} {version}", frame)
                if name in previous:
                    earlier = previous[name]
                    _report(f"{name} {version} (previous {earlier[0]})", frame, earlier[1])
                previous[name] = (version, frame)


def _sitemaps(folder: Path) -> list[Path]:
    """The sitemap files of one build: its root ``sitemap.xml`` and every ``*sitemap*.xml``
    below (the children of an index, language sub-sitemaps)."""
    if not folder.is_dir():
        return []
    return sorted({*folder.glob("sitemap.xml"), *folder.rglob("*sitemap*.xml")})


def main() -> int:
    print("== real sitemaps (the shared corpus)")
    _corpus()
    print(f"== static-site builds ({BUILDS})")
    _builds()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
