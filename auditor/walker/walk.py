"""The walk: from a target to every unique URL with its lastmod, streaming.

Files are read one at a time; an index's children are visited newest-first by
the lastmod the index gives them. One bad file never sinks the walk: it
becomes a :class:`~auditor.models.Problem` and the walk goes on.

:class:`Walk` is the orchestrator and the hot loop; its parts live beside it: where a
walk starts (:mod:`~auditor.walker.start`), opening one file over HTTP, from the disk or
from a previous walk on a 304 (:mod:`~auditor.walker.opening`), what an index says
(:mod:`~auditor.walker.indexes`), a read file's record (:mod:`~auditor.walker.filerecords`),
and the per-URL work (:mod:`~auditor.walker.pages`).

Touches: the network, the disk.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from itertools import chain
from typing import TYPE_CHECKING

from auditor.errors import UsageError
from auditor.models import FileContent, Problem, SitemapEntry, SitemapFile
from auditor.walker.discovery import Target, classify_target
from auditor.walker.filerecords import file_content, file_problems, file_record, judge_for
from auditor.walker.formats import SitemapReader
from auditor.walker.indexes import index_records, next_files
from auditor.walker.indexrules import ChildRules, stranger_problems
from auditor.walker.locs import LocJudge
from auditor.walker.opening import Opened, open_file
from auditor.walker.pages import PageMaker, Pages, T, Tally
from auditor.walker.pending import Pending
from auditor.walker.start import one_file, robots_sitemaps, site_files
from auditor.walkoptions import DEFAULT_MAX_FILES, PROTOCOL_MAX_URLS, WalkOptions

if TYPE_CHECKING:
    from auditor.http.client import HttpClient
    from auditor.walker.reuse import SitemapStore, StoredFile
    from auditor.walker.robotsfile import RobotsFile

__all__ = ["DEFAULT_MAX_FILES", "PROTOCOL_MAX_URLS", "Walk", "WalkOptions"]


ProgressCallback = Callable[[int, int], None]  # (files read, unique URLs so far)
_log = logging.getLogger(__name__)
#: What the reader says of a body with nothing but whitespace (a cut one, too).
_EMPTY = ("not-a-sitemap", "empty response")


class Walk:
    """One walk of a target. Iterate it (once) for :class:`SitemapEntry` values.

    ``problems`` and ``files`` fill in as the walk goes and are complete when
    the iteration ends; ``readable`` tells whether any sitemap could be read.
    ``robots`` is the site's robots.txt response when the walk started from it
    (a site origin), for the sampler to use rather than asking again. With a
    ``previous`` store (:mod:`auditor.walker.reuse`), each file it holds is requested
    conditionally and, when the server says it has not changed, its stored records
    stand in for reading it.
    """

    def __init__(
        self,
        target: str | Target,
        options: WalkOptions | None = None,
        *,
        client: HttpClient | None = None,
        on_progress: ProgressCallback | None = None,
        previous: SitemapStore | None = None,
    ) -> None:
        self.target = target if isinstance(target, Target) else classify_target(target)
        self.options = options or WalkOptions()
        self.problems: list[Problem] = []
        self.files: list[SitemapFile] = []
        self.robots: RobotsFile | None = None
        self.started_at = datetime.now(UTC)
        self._client = client
        self._on_progress = on_progress
        self._previous = previous
        self._pages = Pages()
        self._visited: set[str] = set()
        self._started = False

    @property
    def readable(self) -> bool:
        """True when at least one sitemap file was read as a sitemap."""
        return any(f.readable for f in self.files)

    @property
    def urls(self) -> int:
        """Unique URLs emitted so far."""
        return len(self._pages.seen)

    @property
    def site(self) -> str | None:
        """The site origin the walk is about (None for a local file)."""
        return self.target.site

    def __iter__(self) -> Iterator[SitemapEntry]:
        return chain.from_iterable(self.batches())

    def batches(self) -> Iterator[list[SitemapEntry]]:
        """The entries in lists, as each piece of a file is read (iterate once).

        The same walk as iterating the Walk itself, without a Python step per
        entry: what a fast consumer uses.
        """
        yield from self._run(self._pages.entries)

    def _made(self, maker: Callable[[Pages], PageMaker[T]]) -> Iterator[list[T]]:
        """The walk, each batch of a file's records made into output by ``maker(pages)``.

        Package-internal: how another output of the walk (the JSONL lines of
        :func:`~auditor.walker.jsonl.write_walk_jsonl`) shares its deduplication
        and dates without the walk knowing it. Iterate once, as ``batches``.
        """
        yield from self._run(maker(self._pages))

    def _run(self, make: PageMaker[T]) -> Iterator[list[T]]:
        if self._started:
            raise UsageError("a Walk can be iterated only once")
        self._started = True
        owns_client = self._client is None
        try:
            yield from self._walk(deque(self._start()), make)
        finally:
            if owns_client and self._client is not None:
                self._client.close()

    def _http(self) -> HttpClient:
        """The walk's client, made when first needed: a local file's walk never loads
        the network stack, unless the file lists URLs to read."""
        if self._client is None:
            from auditor.http.client import HttpClient

            self._client = HttpClient(self.options.http)
        return self._client

    def _problem(self, sitemap: str, code: str, detail: str) -> None:
        self.problems.append(Problem(sitemap, code, detail))
        _log.info("problem %s: %s: %s", code, sitemap, detail)

    def _progress(self) -> None:
        if self._on_progress is not None:
            self._on_progress(len(self.files), len(self._pages.seen))

    # -- discovery -------------------------------------------------------------
    def _start(self) -> list[Pending]:
        target = self.target
        if target.kind in ("file", "url"):
            return [one_file(target)]
        site = target.value
        self.robots, declared = robots_sitemaps(self._http(), site, self._problem)
        _log.info("robots.txt of %s lists %d sitemap(s)", site, len(declared))
        return site_files(site, declared)

    # -- the walk --------------------------------------------------------------
    def _walk(self, pending: deque[Pending], make: PageMaker[T]) -> Iterator[list[T]]:
        while pending:
            item = pending.popleft()
            if item.url in item.chain:
                self._problem(
                    item.parent or item.url, "index-loop", f"lists its ancestor {item.url}"
                )
                continue
            if item.url in self._visited:
                _log.debug("%s listed again: read once", item.url)
                continue  # listed twice (robots.txt and an index, or two indexes): read once
            if len(self._visited) >= self.options.max_files:
                self._problem(
                    item.parent or item.url,
                    "max-files",
                    f"stopped at {self.options.max_files:,} files; "
                    f"{len(pending) + 1:,} more listed were not read",
                )
                return
            self._visited.add(item.url)
            tally = Tally()
            yield from self._read_file(item, tally, make)
            pending.extendleft(reversed(next_files(item, tally)))
            self._progress()

    def _read_file(self, item: Pending, tally: Tally, make: PageMaker[T]) -> Iterator[list[T]]:
        client = None if item.local_path is not None else self._http()
        opened = open_file(item, client, self.options.http.max_bytes, self._previous, self._problem)
        if isinstance(opened, SitemapFile):  # not read: its record as unreadable
            self.files.append(opened)
            return
        if opened.reused is not None:
            yield from self._replay(item, opened, opened.reused, tally, make)
            return
        reader = SitemapReader(status=opened.status, headers=opened.headers)
        judge = judge_for(item, opened.final_url)
        children: list[tuple[str, str | None]] = []
        rules = ChildRules(item.url)
        date = self._pages.date
        try:
            for batch in reader.batches(opened.body):
                if reader.kind == "sitemapindex":
                    index_records(batch, judge, tally, children, rules, date)
                else:
                    yield make(batch, item.url, judge, tally, reader.kind)
                    self._progress()
        finally:
            opened.body.close()
        problems = [*reader.problems, *stranger_problems(reader.index_strangers)]
        if opened.body.problem is not None and not reader.html:  # an HTML page: named only
            if reader.ended_mid_document or problems == [_EMPTY]:
                problems = problems[:-1]  # we cut the file (cap, deadline): not its fault
            problems = [*problems, opened.body.problem]
        for code, detail in problems:
            self._problem(item.url, code, detail)
        problems = [*problems, *self._refusals(item, judge)]
        self._counted(item, reader.kind, tally, rules)
        content = file_content(problems, children, tally)
        self.files.append(file_record(item, opened, reader.kind, tally, content))
        _log.info(
            "read %s: %s, %s entries, %s URLs kept, %s bytes%s",
            item.url,
            reader.kind or "not a sitemap",
            f"{tally.records:,}",
            f"{tally.emitted:,}",
            f"{opened.body.bytes_read:,}",
            " (gzip'd)" if opened.body.gzipped else "",
        )

    def _replay(
        self, item: Pending, opened: Opened, stored: StoredFile, tally: Tally, make: PageMaker[T]
    ) -> Iterator[list[T]]:
        """A file the server says has not changed: its stored records go through the walk
        as if just read (judged, deduplicated against the files read before, counted),
        and its problems are reported again."""
        from auditor.walker.reuse import batched  # a walk given a previous one alone

        previous, content = stored.file, stored.file.content or FileContent()
        kind = previous.kind if previous.readable else None
        judge = judge_for(item, opened.final_url)
        children: list[tuple[str, str | None]] = []
        rules = ChildRules(item.url)
        date = self._pages.date
        for batch in batched(stored.records):
            if kind == "sitemapindex":
                index_records(batch, judge, tally, children, rules, date)
            elif kind is not None:
                yield make(batch, item.url, judge, tally, kind)
                self._progress()
        tally.records, tally.without_loc = previous.records, content.without_loc
        for code, detail in content.problems:
            self._problem(item.url, code, detail)
        problems = [*content.problems, *self._refusals(item, judge)]
        self._counted(item, kind, tally, rules)
        content = file_content(problems, children, tally)
        record = file_record(item, opened, kind, tally, content)
        self.files.append(replace(record, gzipped=previous.gzipped, reused=True))
        _log.info(
            "not modified %s: %s, %s entries reused, %s URLs kept",
            item.url,
            kind or "not a sitemap",
            f"{len(stored.records):,}",
            f"{tally.emitted:,}",
        )

    def _refusals(self, item: Pending, judge: LocJudge) -> list[tuple[str, str]]:
        """Report the locs the judge refused; the problems reported."""
        found: list[tuple[str, str]] = []

        def report(sitemap: str, code: str, detail: str) -> None:
            found.append((code, detail))
            self._problem(sitemap, code, detail)

        judge.report(item.url, report)
        return found

    def _counted(self, item: Pending, kind: str | None, tally: Tally, rules: ChildRules) -> None:
        """Report what a file's counts show, then the index rules its children broke
        (computed again on a replay)."""
        limit = self.options.max_urls_per_file
        for code, detail in file_problems(item, kind, tally, limit):
            self._problem(item.url, code, detail)
        for code, detail in rules.problems():
            self._problem(item.url, code, detail)
