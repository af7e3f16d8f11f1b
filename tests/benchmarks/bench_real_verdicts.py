"""The same verdict twice: real sites audited over again with other seeds (run by hand).

    python3 tests/benchmarks/bench_real_verdicts.py [--root /tmp/rs] [--sites a,b] \
        [--repeats 5] [--seed 1] [--sample 50] [--full-sample] [--pages]

Each site of :data:`SITES` prepared under ``--root`` (``bench_real_site.py prepare``, the
command printed by ``--prepare``) is audited as a user auditing it months apart would:
run 1 on one build, run 2 on the next, on one loopback server with a fresh history
(``bench_real_site.replay``), for each of its pairs of builds (v1→v2, v2→v3), ``--repeats``
times over with seeds ``--seed``, ``--seed`` + 1... For each repeat it prints each run's
site verdict (and each sub-sitemap's when there are several) and the figures that decided:
the pages requested (where sequential sampling stopped) and by stratum, credible dates
agreeing, the panel compared on run 2, its changes, lastmod's precision and recall, the
reason and note codes, the panel pages whose lastmod said otherwise than their content,
and, against the theme's post text (``bench_real_site.truth_text``), how many compared
posts were truly edited. ``--pages`` lists every page drawn.

It ends with a table: per site, pair and run, the verdict of each repeat, the set of
verdicts seen, how many distinct pages the repeats drew, and ``FLIP`` where one repeat
says trusted and another untrusted on the same run. Exit status 1 when any FLIP is seen.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from lxml import etree

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_real_site import locate, replay, truth_text  # noqa: E402

from auditor.audit import AuditOptions  # noqa: E402
from auditor.sampler import SampleOptions  # noqa: E402
from auditor.scorer.result import AuditResult, PageObservation  # noqa: E402


@dataclass(frozen=True)
class Site:
    """A real site whose repository commits its build, and how to replay it."""

    name: str  # its folder under --root
    repo: str  # owner/name on GitHub
    branch: str
    commits: str  # bench_real_site.py prepare --commits (COMMIT[:FOLDER],...)
    origin: str  # the origin its sitemaps name
    generator: str
    lastmod: str  # what its lastmod carries
    xpath: str  # the element holding a post's text in its theme
    subdir: str = "."
    base: str = "/"
    sitemap: str = ""
    ignore: str | None = None
    pairs: tuple[tuple[str, str], ...] = (("v1", "v2"), ("v2", "v3"))

    def prepare_command(self) -> str:
        subdir = f" --subdir {self.subdir}" if self.subdir != "." else ""
        return (
            f"python3 tests/benchmarks/bench_real_site.py prepare GIT_DIR /tmp/rs/{self.name}"
            f" --commits {self.commits}{subdir} --origin {self.origin}"
        )


SITES = (
    Site(
        "gyuha",
        "gyuha/gyuha.github.io",
        "main",
        "61a676da48:.,0ad60b949b,b877eec09d",
        "https://gyuha.com",
        "Hugo (build at the root in v1, under docs/ after)",
        "each post's date; tag and category pages their newest post's",
        "//section[@class='post-content']",
        subdir="docs",
    ),
    Site(
        "pymdown",
        "facelessuser/pymdown-extensions",
        "gh-pages",
        "019453ba,ba4c79a2,db737e7b",
        "https://facelessuser.github.io",
        "MkDocs 1.6.1, Material",
        "the build date, date only, on every URL",
        "//article[contains(@class,'md-content__inner')]",
        base="/pymdown-extensions/",
        sitemap="/pymdown-extensions/sitemap.xml",
        ignore=".//aside[contains(@class, 'md-source-file')]",
    ),
    Site(
        "apl",
        "linode/apl-docs",
        "gh-pages",
        "8ae28651f,dbdcd84de,ff097bd83",
        "https://apl-docs.net",
        "Docusaurus 3.7.0, clean URLs",
        "none",
        "//div[contains(@class,'theme-doc-markdown')]",
    ),
    Site(
        "zlf",
        "zlf521000/zlf521000.github.io",
        "master",
        "2bfcba6,1cf9e2f,ffcf3fd",
        "https://javatooffer.uzibird.cn",
        "Hexo 7.3.0, Butterfly; percent-encoded slugs",
        "each post's updated, date only; tag pages their newest post's",
        "//*[@id='article-container']",
    ),
    Site(
        "legends2k",
        "legends2k/legends2k.github.io",
        "master",
        "ec77019,6c17979,01f3deb",
        "https://legends2k.github.io",
        "Hugo (enableGitInfo), tags",
        "each page's last git commit (seconds); tag pages their newest page's",
        "//div[contains(@class,'post-content')]",
    ),
    Site(
        "enigmatisms",
        "Enigmatisms/Enigmatisms.github.io",
        "master",
        "b8c5957,a5bb8c8,dfa2a2a",
        "https://enigmatisms.github.io",
        "Hexo, NexT; hexo-generator-sitemap",
        "each post's updated, date only; tag, category and index pages the build date"
        " (56 of 126 URLs)",
        "//div[contains(concat(' ', normalize-space(@class), ' '), ' post-body ')]",
    ),
    Site(
        "nicksxs",
        "Nicksxs/Nicksxs.github.io",
        "master",
        "8cb22f9b79,b0650bad2b,6bcf424215",
        "https://nicksxs.me",
        "Hexo, NexT; hexo-generator-sitemap; ~800 URLs",
        "each post's updated, date only; tag, category and archive pages the build date"
        " (481 of 799, 594 of 831, 498 of 882 URLs)",
        "//div[contains(concat(' ', normalize-space(@class), ' '), ' post-body ')]",
    ),
    Site(
        "picturingjordan",
        "alanorth/picturingjordan.com",
        "master",
        "95065cb3,75510996,0ce34630",
        "https://picturingjordan.com",
        "Hugo 0.79 (enableGitInfo), en/ar/bg sitemaps under a sitemap index; build in public/",
        "each page's last git commit (seconds), most pages one bulk commit's;"
        " JSON-LD dateModified likewise",
        "//article[@class='blog-post']",
        subdir="public",
        ignore=".//h4[. = 'Translations'] | .//h4[. = 'Translations']/following-sibling::ul[1]",
    ),
    Site(
        "bityoungjae",
        "BitYoungjae/bityoungjae.github.io",
        "master",
        "3ff7cbb,90a553f,d94c9be",
        "https://bityoungjae.com",
        "Hexo 4.0, Icarus; hexo-generator-seo-friendly-sitemap (post, category, tag"
        " sitemaps under an index); weeks apart",
        "each post's updated (source file mtime, milliseconds); tag and category pages"
        " their newest post's",
        "//div[contains(concat(' ', normalize-space(@class), ' '), ' article ')]"
        "/div[@class='content']",
    ),
    Site(
        "akynazh",
        "akynazh/akynazh.github.io",
        "master",
        "8456a9e,e24dc9e,be0efc6",
        "https://akynazh.site",
        "Hugo 0.109, schema.org BlogPosting microdata; weeks apart, not months (builds"
        " before 2023-02-01 list relative <loc>s)",
        "each post's lastmod (seconds)",
        "//div[@itemprop='articleBody']",
    ),
)


@dataclass
class RunRecord:
    """One run of one repeat: its verdicts and the pages it drew."""

    verdict: str
    segments: dict[str, str]
    drawn: frozenset[str]


@dataclass
class Spread:
    """Per site, pair and run (1 or 2): the records of every repeat."""

    runs: dict[tuple[str, str, int], list[RunRecord]] = field(default_factory=dict)

    def add(self, key: tuple[str, str, int], record: RunRecord) -> None:
        self.runs.setdefault(key, []).append(record)


def _path(loc: str, origin: str) -> str:
    return unquote(urlsplit(loc).path) if loc.startswith(origin) else loc


def _short(path: str, width: int = 48) -> str:
    return path if len(path) <= width else path[: width - 1] + "…"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _segment_name(sitemap: str) -> str:
    return urlsplit(sitemap).path.lstrip("/") or sitemap


def describe(
    result: AuditResult,
    pages: list[PageObservation],
    before: list[PageObservation] | None,
    origin: str,
    label: str,
    show_pages: bool,
) -> list[str]:
    """The figures that decided one run's verdict, as lines."""
    s = result.sample
    strata = Counter(p.stratum for p in pages)
    lines = [
        f"    {label}: {result.verdict}; requested {s.requested}, fetched {s.fetched}"
        f" ({', '.join(f'{k} {v}' for k, v in sorted(strata.items()))});"
        f" dates {s.agree}/{s.agree + s.disagree} of {s.with_date_modified} credible"
        f" (low {_fmt(s.agreement_low)}), render-time {s.render_time},"
        f" Last-Modified {s.last_modified_agree}/{s.with_last_modified}"
    ]
    c = result.changes
    if c is not None:
        lines.append(
            f"      changes: compared {c.compared}, changed {c.changed}, lastmod advanced"
            f" {c.lastmod_advanced}, both {c.both}, template only {c.template_only};"
            f" precision {_fmt(c.precision)}, recall {_fmt(c.recall)},"
            f" agreement low {_fmt(c.agreement_low)}"
        )
    if len(result.segments) > 1 or (result.segments and result.segments[0].reasons):
        for seg in result.segments:
            window = seg.window
            extra = (
                f"; window {window.runs} runs, dates {window.agree}/"
                f"{window.agree + window.disagree}, consistent {window.consistent}/"
                f"{window.compared} (low {_fmt(window.change_agreement_low)})"
                if window is not None
                else ""
            )
            lines.append(
                f"      {_segment_name(seg.sitemap)} ({seg.urls} URLs): {seg.verdict};"
                f" requested {seg.requested}, dates {seg.agree}/{seg.agree + seg.disagree},"
                f" compared {seg.compared}, changed {seg.changed}, advanced"
                f" {seg.lastmod_advanced}, P {_fmt(seg.precision)}, R {_fmt(seg.recall)}"
                f"{extra}"
            )
    codes = [r.code + (f"@{_segment_name(r.segment)}" if r.segment else "") for r in result.reasons]
    lines.append(
        f"      reasons: {', '.join(codes) or '-'}; notes:"
        f" {', '.join(n.code for n in result.notes) or '-'}"
    )
    if before is not None:
        was = {p.loc: p for p in before}
        moved_same, changed_still = [], []
        for page in pages:
            old = was.get(page.loc)
            if page.content_changed is None or old is None:
                continue
            advanced = (
                page.lastmod is not None and old.lastmod is not None and page.lastmod > old.lastmod
            )
            if advanced and not page.content_changed:
                moved_same.append(_short(_path(page.loc, origin)))
            elif page.content_changed and not advanced:
                where = _short(page.change_summary or "-", 60)
                changed_still.append(f"{_short(_path(page.loc, origin))} ({where})")
        if moved_same:
            lines.append(f"      lastmod moved, content same ({len(moved_same)}): {moved_same}")
        if changed_still:
            lines.append(
                f"      content changed, lastmod still ({len(changed_still)}): {changed_still}"
            )
    if show_pages:
        drawn = sorted(_short(_path(p.loc, origin), 40) for p in pages)
        lines.append(f"      drawn: {drawn}")
    return lines


def truth(
    folder: Path, site: Site, pair: tuple[str, str], pages: list[PageObservation], origin: str
) -> tuple[int, int, int, int]:
    """Over run 2's compared pages that are posts of the theme: (posts, edited, false
    changes, missed changes) of auditor's comparison against the post text."""
    container = etree.XPath(site.xpath)
    ignore = etree.XPath(site.ignore) if site.ignore else None
    posts = edited = false = missed = 0
    for page in pages:
        if page.content_changed is None:
            continue
        path = urlsplit(page.loc).path if page.loc.startswith(origin) else page.loc
        old = truth_text(locate(folder / pair[0], path, site.base), container, ignore)
        new = truth_text(locate(folder / pair[1], path, site.base), container, ignore)
        if old is None or new is None:
            continue
        posts += 1
        edited += old != new
        false += bool(page.content_changed) and old == new
        missed += (not page.content_changed) and old != new
    return posts, edited, false, missed


def _locs(build: Path) -> int:
    return sum(x.read_text(errors="replace").count("<loc>") for x in build.rglob("*.xml"))


def run_site(site: Site, folder: Path, args: argparse.Namespace, spread: Spread) -> None:
    urls = {
        run: _locs(folder / run)
        for run in sorted({r for pair in site.pairs for r in pair})
        if (folder / run).is_dir()
    }
    print(f"\n== {site.name}: {site.repo} ({site.generator}); lastmod: {site.lastmod}")
    print(f"   <loc> in the builds' XML files: {urls}")
    sampling = SampleOptions(sample=args.sample, delay=0.0, sequential=not args.full_sample)
    for pair in site.pairs:
        if not all((folder / run).is_dir() for run in pair):
            continue
        print(f"  pair {pair[0]}→{pair[1]}")
        for repeat in range(args.repeats):
            seed = args.seed + repeat
            options = AuditOptions(sample=sampling, seed=seed)
            done = replay(folder, list(pair), options, site.base, site.sitemap)
            results, pages, origin = done.results, done.pages, done.origin
            heads = []
            for n, result in enumerate(results, start=1):
                segments = {_segment_name(s.sitemap): s.verdict for s in result.segments}
                drawn = frozenset(_path(p.loc, origin) for p in pages[n - 1])
                record = RunRecord(result.verdict, segments, drawn)
                spread.add((site.name, "→".join(pair), n), record)
                per = f" [{', '.join(f'{k} {v}' for k, v in segments.items())}]"
                heads.append(f"run {n} {result.verdict}" + (per if len(segments) > 1 else ""))
            print(f"   repeat {repeat + 1} (seed {seed}): {' | '.join(heads)}")
            for n, result in enumerate(results, start=1):
                before = pages[n - 2] if n > 1 else None
                for line in describe(
                    result, pages[n - 1], before, origin, f"run {n} ({pair[n - 1]})", args.pages
                ):
                    print(line)
            posts, edited, false, missed = truth(folder, site, pair, pages[-1], origin)
            print(
                f"      truth over run 2's compared posts: {posts} posts, {edited} edited;"
                f" false changes {false}, missed {missed}"
            )


def summary(spread: Spread) -> bool:
    """Print the spread table; True when any FLIP was seen."""
    flipped = False
    print("\n| site | pair | run | verdicts by repeat | seen |", end="")
    print(" pages drawn (distinct / mean) | flag |")
    print("|---|---|---|---|---|---|---|")
    for (name, pair, run), records in spread.runs.items():
        verdicts = [r.verdict for r in records]
        seen = sorted(set(verdicts))
        flag = "FLIP" if {"trusted", "untrusted"} <= set(verdicts) else ""
        flipped |= bool(flag)
        segment_flags = []
        for segment in sorted({k for r in records for k in r.segments}):
            values = {r.segments.get(segment) for r in records}
            if {"trusted", "untrusted"} <= values:
                segment_flags.append(f"{segment} flips")
        distinct = len(frozenset().union(*(r.drawn for r in records)))
        mean = sum(len(r.drawn) for r in records) / len(records)
        flags = ", ".join(filter(None, [flag, *segment_flags]))
        print(
            f"| {name} | {pair} | {run} | {' '.join(verdicts)} | {', '.join(seen)} |"
            f" {distinct} / {mean:.1f} | {flags} |"
        )
    return flipped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/tmp/rs"), help="prepared sites")
    parser.add_argument("--sites", default="", help="names from the table, comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1, help="the first repeat's seed")
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--full-sample", action="store_true", help="no sequential stop")
    parser.add_argument("--pages", action="store_true", help="list every page drawn")
    parser.add_argument("--prepare", action="store_true", help="print the prepare commands")
    args = parser.parse_args()
    chosen = [s for s in SITES if not args.sites or s.name in args.sites.split(",")]
    if args.prepare:
        for site in chosen:
            print(f"# {site.repo} ({site.branch}); GIT_DIR: a bare clone of it")
            print(site.prepare_command())
        return 0
    spread = Spread()
    for site in chosen:
        folder = args.root / site.name
        if not folder.is_dir():
            print(f"\n== {site.name}: not prepared ({folder}); {site.prepare_command()}")
            continue
        run_site(site, folder, args, spread)
    return 1 if summary(spread) else 0


if __name__ == "__main__":
    sys.exit(main())
