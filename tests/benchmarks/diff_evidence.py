"""Differential check of page evidence: every field of ``read_page`` (fingerprint, blocks'
bytes, links...), the main text and every block's normalised text, over every HTML page
of the shared corpus and the demo sites' pages, written by one tree and compared by another.

Run by hand, never by pytest (an optimisation of the evidence must leave this unchanged):

    python3 tests/benchmarks/diff_evidence.py --tree /tmp/before --write /tmp/evidence.txt
    python3 tests/benchmarks/diff_evidence.py --check /tmp/evidence.txt

``--tree`` imports ``auditor`` from another checkout (a ``git archive`` of the starting
commit); by default this one's. Each page is read plain and with RDFa.

Touches: the disk.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import random
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = next(
    (p / "shared" / "corpus" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared").is_dir()),
    ROOT.parent / "shared" / "corpus",
)
#: The fixed moment every page is read at (and the demo sites' clocks start at).
MOMENT = datetime(2026, 1, 1, tzinfo=UTC)


def _corpus_pages() -> Iterator[tuple[str, bytes]]:
    for path in sorted((CORPUS / "html").rglob("*")):
        if path.is_file() and (path.suffix == ".html" or path.name.endswith(".html.gz")):
            data = path.read_bytes()
            yield (
                str(path.relative_to(CORPUS)),
                gzip.decompress(data) if path.suffix == ".gz" else data,
            )


def _demo_pages() -> Iterator[tuple[str, bytes]]:
    from auditor.demo import demo_sites

    random.seed(7)  # page_html draws its churn from the global generator
    for name, site in demo_sites(MOMENT).items():
        for path in list(site.pages)[:40]:
            page = site.page_html(path, MOMENT)
            if page is not None:
                yield f"demo/{name}{path}", page.encode("utf-8")


def _lines() -> Iterator[str]:
    from auditor.evidence.fingerprint import main_text
    from auditor.evidence.page import parse_html, read_page
    from auditor.evidence.segment import cut_blocks_with_text
    from auditor.evidence.text import content_root

    for name, html in [*_corpus_pages(), *_demo_pages()]:
        url = f"https://example.org/{name}"
        for rdfa in (False, True):
            evidence = read_page(
                html, url=url, headers={"content-type": "text/html"}, status=200,
                fetched_at=MOMENT, rdfa=rdfa,
            )  # fmt: skip
            yield f"{name} rdfa={rdfa} {evidence!r}"
        tree = parse_html(html, "text/html")
        text = main_text(tree)
        yield f"{name} main {hashlib.sha256(text.encode()).hexdigest()} {len(text)}"
        for block, block_text in cut_blocks_with_text(tree, content_root(tree)):
            yield f"{name} block {block!r} {block_text!r}"


def main() -> None:
    """Write the lines of ``--tree`` (or this checkout), or compare them with a file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=ROOT)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path)
    group.add_argument("--check", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree))
    lines = list(_lines())
    if args.write:
        args.write.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{len(lines)} lines written")
        return
    stored = args.check.read_text(encoding="utf-8").splitlines()
    differ = [(a, b) for a, b in zip(stored, lines, strict=False) if a != b]
    for a, b in differ[:5]:
        print(f"- {a[:300]}\n+ {b[:300]}")
    same = not differ and len(stored) == len(lines)
    print(f"{len(lines)} lines, {len(stored)} stored: {'identical' if same else 'DIFFERENT'}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
