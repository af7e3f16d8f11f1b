"""A real static site at two commits, audited twice on loopback (run by hand, not by pytest).

    python3 tests/benchmarks/bench_real_site.py prepare GIT_DIR FOLDER --commits A,B \
        --origin https://host [--subdir docs]
    python3 tests/benchmarks/bench_real_site.py FOLDER XPATH [--sample N] [--seeds 1,2,3] \
        [--base /sub/path/] [--sitemap /sub/path/sitemap.xml] [--runs v1,v2] [--full-sample] \
        [--ignore XPATH]

``prepare`` extracts each commit of a repository that commits its build (a bare git
directory, a branch or commit each, ``--subdir`` the folder holding the build, or
``COMMIT:FOLDER`` for a commit whose build sits elsewhere) into
``FOLDER/v1``, ``v2``...; in every ``.xml`` file and ``robots.txt`` the site's origin is
replaced by ``{{origin}}``, and in every ``.html`` file (so that absolute links lead to the
replay's server). Nothing of the site is kept in this repository.

The second form audits ``FOLDER/<run>`` for each of ``--runs`` in turn (default
``v1,v2``) on one loopback server: a URL ending in ``/`` is served its ``index.html``,
an extensionless one its ``.html`` file or folder index (Docusaurus, clean URLs), paths
are percent-decoded (non-ASCII slugs), and a site published under a sub-path is served
with ``--base`` stripped (the build sits at the folder's root). ``--sitemap`` is the
path the audit starts from (a site under a sub-path, a sitemap named otherwise); by
default the origin, walked from robots.txt and ``/sitemap.xml``. ``--full-sample``
turns sequential sampling off, so that every run compares up to ``--sample`` pages (a
site condemned by its lastmod values alone is otherwise given a small confirming
sample, which says little of change detection). XPATH names the element
holding a post's text in that site's theme (``//section[@class='post-content']``): its
text, with whitespace and markup ignored, is the truth of whether the post changed,
independent of auditor's blocks; ``--ignore`` leaves elements inside it out of that text
(``.//aside[contains(@class, 'md-source-file')]``: a "last update" stamp).

For each seed it prints each run's verdict (per sub-sitemap too), the change figures,
reasons and notes, and, over the posts compared by the last run, the false and missed
changes of auditor's block comparison and of the whole-main-text ``exact`` hash used
before, each with its URL and auditor's summary.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

from lxml import etree

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.audit import AuditOptions, audit_site  # noqa: E402
from auditor.evidence.page import parse_html  # noqa: E402
from auditor.history import History  # noqa: E402
from auditor.sampler import SampleOptions  # noqa: E402
from auditor.scorer.result import AuditResult, PageObservation  # noqa: E402
from tests.loopback import LoopbackServer  # noqa: E402

COUNTS = ("posts", "edited", "false", "missed", "false_exact", "missed_exact")


def locate(root: Path, url_path: str, base: str = "/") -> Path | None:
    """The file a static host serves for ``url_path`` from a build at ``root`` published
    under ``base``: percent-decoded, ``/a/`` as ``a/index.html``, an extensionless ``/a``
    as ``a.html`` or ``a/index.html``; None outside the build or absent."""
    path = unquote(url_path.split("?", 1)[0].split("#", 1)[0])
    if not path.startswith(base):
        return None
    relative = path[len(base) :].lstrip("/")
    candidates = [relative + "index.html"] if relative.endswith("/") or not relative else []
    if relative and not relative.endswith("/"):
        candidates += [relative, relative + ".html", relative + "/index.html"]
    resolved = root.resolve()
    for candidate in candidates:
        file = (root / candidate).resolve()
        if file.is_relative_to(resolved) and file.is_file():
            return file
    return None


class BuiltSiteServer(LoopbackServer):
    """Serves a built site as a static host does (:func:`locate`), HTML and XML typed."""

    base: str = "/"

    def render(self, relative: str) -> bytes | None:
        if self.root is None:
            return None
        file = locate(self.root, relative, self.base)
        return None if file is None else super().render(str(file.relative_to(self.root.resolve())))

    def content_type(self, path: str) -> str:
        return "application/xml" if path.endswith(".xml") else "text/html"


def truth_text(
    file: Path | None, container: etree.XPath, ignore: etree.XPath | None = None
) -> str | None:
    """The normalised text of the theme's post container, without what ``ignore`` selects
    inside it, or None (not a post)."""
    if file is None or file.suffix not in (".html", ".htm"):
        return None
    found = container(parse_html(file.read_bytes()))
    if not found:
        return None
    post = found[0]
    for element in ignore(post) if ignore is not None else ():
        if element is not post and element.getparent() is not None:
            element.getparent().remove(element)
    return " ".join(unicodedata.normalize("NFKC", "".join(post.itertext())).casefold().split())


def show(result: AuditResult, label: str) -> None:
    """A run's verdict, per sub-sitemap, with its reasons, change figures and notes."""
    print(f"  {label}: {result.verdict}")
    for segment in result.segments:
        name = segment.sitemap.rsplit("/", 1)[-1] or segment.sitemap
        print(
            f"    {name} ({segment.urls} URLs): {segment.verdict}; requested"
            f" {segment.requested}, dates {segment.agree}/{segment.agree + segment.disagree},"
            f" compared {segment.compared}, changed {segment.changed},"
            f" lastmod advanced {segment.lastmod_advanced}"
        )
    for reason in result.reasons:
        print(f"    reason {reason.code}: {reason.detail}")
    if result.changes:
        c = result.changes
        print(
            f"    compared {c.compared}, changed {c.changed}, lastmod advanced"
            f" {c.lastmod_advanced}, both {c.both}, template only {c.template_only}"
        )
    for note in result.notes:
        print(f"    note {note.code}: {note.detail}")


class Replay(NamedTuple):
    """The audits of a replay, in order: each run's result and the pages it observed."""

    results: list[AuditResult]
    pages: list[list[PageObservation]]
    origin: str  # the loopback origin the runs were served from


def replay(
    folder: Path,
    runs: list[str],
    options: AuditOptions,
    base: str = "/",
    sitemap: str = "",
    shown: Callable[[AuditResult, str], None] | None = None,
) -> Replay:
    """Audit ``folder/<run>`` for each of ``runs`` in turn on one loopback server, with a
    fresh history in a temporary directory (a user auditing the site months apart);
    ``shown`` is called with each result and its run as it comes."""
    with tempfile.TemporaryDirectory() as tmp, History.open(Path(tmp) / "h.sqlite3") as history:
        with BuiltSiteServer(root=folder / runs[0]) as server:
            server.base = base
            results = []
            for run in runs:
                server.root = folder / run
                results.append(audit_site(server.origin + (sitemap or ""), history, options))
                if shown is not None:
                    shown(results[-1], run)
            origin = server.origin
        pages = [list(history.pages(result.run_id or 0)) for result in results]
    return Replay(results, pages, origin)


def one_seed(
    folder: Path, container: etree.XPath, args: argparse.Namespace, seed: int
) -> dict[str, int]:
    """Audit each run's build in turn; count the last run's changes against the truth."""
    sampling = SampleOptions(sample=args.sample, delay=0.0, sequential=not args.full_sample)
    options = AuditOptions(sample=sampling, seed=seed)
    runs = args.runs.split(",")
    print(f"seed {seed}:")
    replayed = replay(folder, runs, options, args.base, args.sitemap, shown=show)
    origin = replayed.origin
    before = {p.loc: p for p in replayed.pages[-2]}
    after = replayed.pages[-1]
    counts = dict.fromkeys(COUNTS, 0)
    for page in after:
        if page.content_changed is None:
            continue
        path = urlsplit(page.loc).path if page.loc.startswith(origin) else page.loc
        old = truth_text(locate(folder / runs[-2], path, args.base), container, args.ignore)
        new = truth_text(locate(folder / runs[-1], path, args.base), container, args.ignore)
        if old is None or new is None:
            continue
        _count(counts, page, before[page.loc], old != new)
    return counts


def _count(
    counts: dict[str, int], page: PageObservation, was: PageObservation, edited: bool
) -> None:
    exact = page.fp_exact != was.fp_exact
    counts["posts"] += 1
    counts["edited"] += edited
    wrong = bool(page.content_changed) != edited
    counts["false"] += wrong and not edited
    counts["missed"] += wrong and edited
    counts["false_exact"] += exact and not edited
    counts["missed_exact"] += edited and not exact
    if wrong:
        kind = "missed" if edited else "false"
        print(f"    {kind}: {unquote(page.loc)} ({page.change_summary}; {page.template_regions})")


def extract(git_dir: Path, tree: str, into: Path) -> int:
    """Write every file of ``tree`` under ``into`` (symbolic links and submodules left out);
    returns how many blobs the snapshot lacks (a fetched mirror may leave out large files)."""
    git = ["git", f"--git-dir={git_dir}"]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", tree], check=True, capture_output=True
    ).stdout
    files = []
    for entry in listing.split(b"\0"):
        if entry:
            meta, name = entry.split(b"\t", 1)
            mode, kind, sha = meta.split()
            if kind == b"blob" and mode in (b"100644", b"100755"):
                files.append((sha, os.fsdecode(name)))
    batch = subprocess.run(
        [*git, "cat-file", "--batch"],
        input=b"".join(sha + b"\n" for sha, _ in files),
        check=True,
        capture_output=True,
    ).stdout
    offset, missing = 0, 0
    resolved = into.resolve()
    for _, name in files:
        end = batch.index(b"\n", offset)
        header = batch[offset:end].split()
        offset = end + 1
        if header[-1] == b"missing":
            missing += 1
            continue
        size = int(header[2])
        target = (into / name).resolve()
        if target.is_relative_to(resolved):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(batch[offset : offset + size])
        offset += size + 1
    return missing


def prepare(args: argparse.Namespace) -> int:
    """Extract each commit's build into FOLDER/v1, v2... with the origin made ``{{origin}}``."""
    for n, item in enumerate(args.commits.split(","), start=1):
        commit, _, subdir = item.partition(":")
        subdir = subdir or args.subdir
        into = args.folder / f"v{n}"
        into.mkdir(parents=True, exist_ok=False)
        tree = commit if subdir in ("", ".") else f"{commit}:{subdir}"
        missing = extract(args.git_dir, tree, into)
        origin = re.compile(re.escape(args.origin.rstrip("/")).encode())
        # the pages too: their absolute links then lead to the replay's server, as the
        # real ones led to the site (a list page's children are looked up by its links)
        for text in [*into.rglob("*.xml"), *into.glob("robots.txt"), *into.rglob("*.html")]:
            text.write_bytes(origin.sub(b"{{origin}}", text.read_bytes()))
        date = subprocess.run(
            ["git", f"--git-dir={args.git_dir}", "log", "-1", "--format=%h %cI", commit],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        html = sum(1 for _ in into.rglob("*.html"))
        print(f"v{n}: {date}, {html} HTML files" + (f"; {missing} blobs absent" if missing else ""))
    return 0


def main() -> int:
    if sys.argv[1:2] == ["prepare"]:
        parser = argparse.ArgumentParser(description="extract a site's build at commits")
        parser.add_argument("git_dir", type=Path)
        parser.add_argument("folder", type=Path)
        parser.add_argument("--commits", required=True)
        parser.add_argument("--origin", required=True, help="the site's origin in its sitemaps")
        parser.add_argument("--subdir", default=".", help="the folder holding the build")
        return prepare(parser.parse_args(sys.argv[2:]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("xpath")
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--seeds", default="1,2,3,4")
    parser.add_argument("--runs", default="v1,v2", help="the builds audited, in order")
    parser.add_argument(
        "--full-sample",
        action="store_true",
        help="every run samples --sample pages (no early stop)",
    )
    parser.add_argument("--base", default="/", help="the sub-path the site is published under")
    parser.add_argument("--sitemap", default="", help="the path the audit starts from")
    parser.add_argument(
        "--ignore", type=etree.XPath, help="elements left out of the post's text (relative XPath)"
    )
    args = parser.parse_args()
    container = etree.XPath(args.xpath)
    total = dict.fromkeys(COUNTS, 0)
    for seed in (int(s) for s in args.seeds.split(",")):
        for key, value in one_seed(args.folder, container, args, seed).items():
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
