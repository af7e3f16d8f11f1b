"""A real static site at two commits, audited twice on loopback (run by hand, not by pytest).

    python3 tests/benchmarks/bench_real_site.py FOLDER XPATH [--sample N] [--seeds 1,2,3]

FOLDER holds ``v1/`` and ``v2/``: a site's built HTML and ``sitemap.xml`` at two commits
of a repository that commits its build (the sitemap's origin replaced by ``{{origin}}``;
a URL ending in ``/`` is served its ``index.html``). XPATH names the element holding a
post's text in that site's theme (``//section[@class='post-content']``): its text, with
whitespace and markup ignored, is the truth of whether the post changed, independent of
auditor's blocks. Nothing of the site is kept in this repository.

For each seed it prints both runs' verdicts, the change figures and notes, and, over
the compared posts, the false and missed changes of auditor's block comparison and of
the whole-main-text ``exact`` hash used before.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import unicodedata
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.audit import AuditOptions, audit_site  # noqa: E402
from auditor.evidence.page import parse_html  # noqa: E402
from auditor.history import History  # noqa: E402
from auditor.sampler import SampleOptions  # noqa: E402
from tests.loopback import LoopbackServer  # noqa: E402


class BuiltSiteServer(LoopbackServer):
    """Serves a built site: ``/a/`` is ``/a/index.html``, HTML and XML typed."""

    def render(self, relative: str) -> bytes | None:
        path = relative.split("?", 1)[0]
        return super().render(path + "index.html" if path.endswith("/") else path)

    def content_type(self, path: str) -> str:
        return "application/xml" if path.endswith(".xml") else "text/html"


def truth_text(page: Path, container: etree.XPath) -> str | None:
    """The normalised text of the theme's post container, or None (not a post)."""
    file = page / "index.html" if page.is_dir() else page
    if not file.is_file():
        return None
    found = container(parse_html(file.read_bytes()))
    if not found:
        return None
    return " ".join(unicodedata.normalize("NFKC", "".join(found[0].itertext())).casefold().split())


def one_seed(folder: Path, container: etree.XPath, sample: int, seed: int) -> dict[str, int]:
    options = AuditOptions(sample=SampleOptions(sample=sample, delay=0.0), seed=seed)
    with tempfile.TemporaryDirectory() as tmp, History.open(Path(tmp) / "h.sqlite3") as history:
        with BuiltSiteServer(root=folder / "v1") as server:
            first = audit_site(server.origin, history, options)
            server.root = folder / "v2"
            second = audit_site(server.origin, history, options)
            origin = server.origin
        before = {p.loc: p for p in history.pages(first.run_id or 0)}
        after = history.pages(second.run_id or 0)
    print(f"seed {seed}: {first.verdict} -> {second.verdict}")
    for reason in second.reasons:
        print(f"  reason {reason.code}: {reason.detail}")
    if second.changes:
        c = second.changes
        print(
            f"  compared {c.compared}, changed {c.changed}, lastmod advanced"
            f" {c.lastmod_advanced}, both {c.both}, template only {c.template_only}"
        )
    for note in second.notes:
        print(f"  note: {note.detail}")
    counts = dict.fromkeys(("posts", "edited", "false", "missed", "false_exact", "missed_exact"), 0)
    for page in after:
        if page.content_changed is None:
            continue
        path = page.loc.removeprefix(origin).split("?", 1)[0].lstrip("/")
        old, new = (
            truth_text(folder / "v1" / path, container),
            truth_text(folder / "v2" / path, container),
        )
        if old is None or new is None:
            continue
        edited, exact = old != new, page.fp_exact != before[page.loc].fp_exact
        counts["posts"] += 1
        counts["edited"] += edited
        counts["false"] += bool(page.content_changed) and not edited
        counts["missed"] += edited and not page.content_changed
        counts["false_exact"] += exact and not edited
        counts["missed_exact"] += edited and not exact
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("xpath")
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--seeds", default="1,2,3,4")
    args = parser.parse_args()
    container = etree.XPath(args.xpath)
    total = dict.fromkeys(("posts", "edited", "false", "missed", "false_exact", "missed_exact"), 0)
    for seed in (int(s) for s in args.seeds.split(",")):
        for key, value in one_seed(args.folder, container, args.sample, seed).items():
            total[key] += value
    unchanged = total["posts"] - total["edited"]
    print(
        f"\nover {total['posts']} compared posts ({total['edited']} edited):\n"
        f"  blocks: false changes {total['false']}/{unchanged},"
        f" missed {total['missed']}/{total['edited']}\n"
        f"  exact:  false changes {total['false_exact']}/{unchanged},"
        f" missed {total['missed_exact']}/{total['edited']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
