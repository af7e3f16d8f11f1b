"""False-change and missed-change rates over the site evolutions (run by hand, not by pytest).

    python3 tests/benchmarks/bench_evolutions.py

Each evolution of ``fixtures/evolutions`` is served on loopback as its ``v1/`` build and
audited, then as its ``v2/`` build and audited again into the same history, as
``tests/audit/test_evolutions.py`` does. Per evolution and over the set, it prints the
compared pages, the truth (``manifest.json``), the false changes (template churn read as
content change) and the missed changes (real edits not seen), for the block comparison
auditor uses and for the whole-main-text ``exact`` hash it used before, and the verdict
of each run.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.audit import AuditOptions, audit_site  # noqa: E402
from auditor.history import History  # noqa: E402
from auditor.sampler import SampleOptions  # noqa: E402
from tests.loopback import FIXTURES, LoopbackServer  # noqa: E402

OPTIONS = AuditOptions(sample=SampleOptions(sample=40, delay=0.0), seed=1)


def run(name: str, folder: Path) -> dict[str, object]:
    """Two audits of one evolution; the counts of each way of comparing."""
    site = FIXTURES / "evolutions" / name
    truth = json.loads((site / "manifest.json").read_text(encoding="utf-8"))["pages"]
    with History.open(folder / f"{name}.sqlite3") as history:
        with LoopbackServer(root=site / "v1") as server:
            first = audit_site(server.origin, history, OPTIONS)
            server.root = site / "v2"
            second = audit_site(server.origin, history, OPTIONS)
            origin = server.origin
        before = {p.loc: p for p in history.pages(first.run_id or 0)}
        after = history.pages(second.run_id or 0)
    counts = {"pages": 0, "edited": 0, "false": 0, "missed": 0, "false_exact": 0, "missed_exact": 0}
    for page in after:
        path = page.loc.removeprefix(origin)
        if path not in truth or page.content_changed is None:
            continue
        edited = truth[path]["changed"]
        exact = page.fp_exact != before[page.loc].fp_exact
        counts["pages"] += 1
        counts["edited"] += edited
        counts["false"] += bool(page.content_changed) and not edited
        counts["missed"] += edited and not page.content_changed
        counts["false_exact"] += exact and not edited
        counts["missed_exact"] += edited and not exact
    notes = [n.detail for n in second.notes]
    return {**counts, "verdicts": (first.verdict, second.verdict), "notes": notes}


def _rate(part: int, whole: int) -> str:
    return f"{part}/{whole} = {part / whole:.1%}" if whole else "-"


def main() -> int:
    names = sorted(p.name for p in (FIXTURES / "evolutions").iterdir() if p.is_dir())
    total = dict.fromkeys(("pages", "edited", "false", "missed", "false_exact", "missed_exact"), 0)
    print(f"{'evolution':<20} pages edited  false missed | exact: false missed | verdicts")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            r = run(name, Path(tmp))
            for key in total:
                total[key] += r[key]  # type: ignore[operator]
            first, second = r["verdicts"]  # type: ignore[misc]
            print(
                f"{name:<20} {r['pages']:5} {r['edited']:6} {r['false']:6} {r['missed']:6} |"
                f" {r['false_exact']:12} {r['missed_exact']:6} | {first} -> {second}"
            )
            for note in r["notes"]:  # type: ignore[attr-defined]
                print(f"{'':<20} note: {note}")
    unchanged = total["pages"] - total["edited"]
    print(
        f"\nover {total['pages']} compared pages ({total['edited']} edited, {unchanged} not):\n"
        f"  blocks, template left out: false changes {_rate(total['false'], unchanged)},"
        f" missed changes {_rate(total['missed'], total['edited'])}\n"
        f"  exact main-text hash:      false changes {_rate(total['false_exact'], unchanged)},"
        f" missed changes {_rate(total['missed_exact'], total['edited'])}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
