"""The walk: from a target to every unique URL with its lastmod, streaming.

Files are read one at a time; an index's children are visited newest-first by
the lastmod the index gives them. One bad file never sinks the walk: it
becomes a :class:`~auditor.models.Problem` and the walk goes on.

Touches: the network, the disk.
"""

from __future__ import annotations

import http.client
import logging
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path

from auditor.errors import UsageError
from auditor.http import Body, FetchFailure, HttpClient, HttpOptions, read_local_file
from auditor.http.walls import body_head, wall_of
from auditor.models import FileContent, Problem, SitemapEntry, SitemapFile
from auditor.walker.discovery import (
    Target,
    classify_target,
    decode_robots,
    sitemaps_from_robots,
)
from auditor.walker.formats import Record, SitemapReader
from auditor.walker.indexrules import ChildRules, stranger_problems
from auditor.walker.locs import LocJudge, Origin, origin_of
from auditor.walker.pages import PageMaker, Pages, T, Tally
from auditor.walker.reuse import SitemapStore, StoredFile, batched
from auditor.walker.robotsfile import RobotsFile, fetch_robots_file
from auditor.walker.tallies import tally_problems

__all__ = ["DEFAULT_MAX_FILES", "PROTOCOL_MAX_URLS", "Walk", "WalkOptions"]

#: Files read at most in one walk: a full 1,000-file index with room to spare.
DEFAULT_MAX_FILES = 5_000
#: The protocol's limit of URLs (or child sitemaps) in one file.
PROTOCOL_MAX_URLS = 50_000

ProgressCallback = Callable[[int, int], None]  # (files read, unique URLs so far)
_log = logging.getLogger(__name__)
_EPOCH = datetime.min.replace(tzinfo=UTC)
#: What the reader says of a body with nothing but whitespace (a cut one, too).
_EMPTY = ("not-a-sitemap", "empty response")


@dataclass(frozen=True)
class WalkOptions:
    """How a walk behaves; every field has a named default."""

    http: HttpOptions = field(default_factory=HttpOptions)
    max_files: int = DEFAULT_MAX_FILES
    max_urls_per_file: int = PROTOCOL_MAX_URLS


@dataclass(frozen=True)
class _Pending:
    """A sitemap file waiting to be read."""

    url: str
    parent: str | None = None
    via_robots: bool = False
    index_lastmod: datetime | None = None
    chain: tuple[str, ...] = ()  # the indexes that led here, root first
    extra_origins: tuple[Origin, ...] = ()  # origins its pages may use besides its own
    local_path: Path | None = None


@dataclass
class _Opened:
    """A file ready to stream, with what its response said about it."""

    body: Body
    fetched_at: datetime
    status: int | None = None
    final_url: str | None = None
    date_header: str | None = None
    last_modified_header: str | None = None
    etag: str | None = None
    reused: StoredFile | None = None  # a 304 answered the conditional request: read this
    headers: Mapping[str, str] = field(default_factory=dict)  # the response's (walls)


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
        if self._client is None:
            self._client = HttpClient(self.options.http)
        try:
            yield from self._walk(deque(self._start()), make)
        finally:
            if owns_client:
                self._client.close()

    def _problem(self, sitemap: str, code: str, detail: str) -> None:
        self.problems.append(Problem(sitemap, code, detail))
        _log.info("problem %s: %s: %s", code, sitemap, detail)

    def _progress(self) -> None:
        if self._on_progress is not None:
            self._on_progress(len(self.files), len(self._pages.seen))

    # -- discovery -------------------------------------------------------------
    def _start(self) -> list[_Pending]:
        target = self.target
        if target.kind == "file":
            path = Path(target.value)
            return [_Pending(url=str(path), local_path=path)]
        if target.kind == "url":
            return [_Pending(url=target.value)]
        site = target.value
        declared = self._robots_sitemaps(site)
        _log.info("robots.txt of %s lists %d sitemap(s)", site, len(declared))
        if not declared:
            return [_Pending(url=site + "/sitemap.xml")]
        site_origin = origin_of(site)
        return [_Pending(url=u, via_robots=True, extra_origins=(site_origin,)) for u in declared]

    def _robots_sitemaps(self, site: str) -> list[str]:
        assert self._client is not None
        robots = self.robots = fetch_robots_file(self._client, site)
        url = robots.url
        if robots.wall is not None:
            self._problem(url, "blocked", f"robots.txt: {robots.wall}")
            return []
        if robots.failure is not None:
            code, detail = robots.failure
            self._problem(url, code, f"robots.txt: {detail}")
            return []
        if not robots.ok:
            status = robots.status or 0
            if status >= 500 or status == 429:
                self._problem(url, "http-error", f"robots.txt: {_status_text(status)}")
            return []
        if robots.body_problem and robots.body_problem[0] != "too-large":
            code, detail = robots.body_problem  # the lines that arrived are still used
            self._problem(url, code, f"robots.txt: {detail}")
        return sitemaps_from_robots(decode_robots(robots.body), site)

    # -- the walk --------------------------------------------------------------
    def _walk(self, pending: deque[_Pending], make: PageMaker[T]) -> Iterator[list[T]]:
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
            pending.extendleft(reversed(self._children(item, tally)))
            self._progress()

    def _read_file(self, item: _Pending, tally: Tally, make: PageMaker[T]) -> Iterator[list[T]]:
        opened = self._open(item)
        if opened is None:
            return
        if opened.reused is not None:
            yield from self._replay(item, opened, opened.reused, tally, make)
            return
        reader = SitemapReader(status=opened.status, headers=opened.headers)
        judge = self._judge_for(item, opened.final_url)
        children: list[tuple[str, str | None]] = []
        rules = ChildRules(item.url)
        try:
            for batch in reader.batches(opened.body):
                if reader.kind == "sitemapindex":
                    self._index_records(batch, judge, tally, children, rules)
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
        self._tally_problems(item, reader.kind, tally)
        self._rule_problems(item, rules)
        content = FileContent(
            tuple(problems),
            tuple(children),
            tally.without_loc,
            tally.duplicates,
            tuple(tally.repeated),
        )
        self.files.append(self._file_record(item, opened, reader.kind, tally, content))
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
        self, item: _Pending, opened: _Opened, stored: StoredFile, tally: Tally, make: PageMaker[T]
    ) -> Iterator[list[T]]:
        """A file the server says has not changed: its stored records go through the walk
        as if just read (judged, deduplicated against the files read before, counted),
        and its problems are reported again."""
        previous, content = stored.file, stored.file.content or FileContent()
        kind = previous.kind if previous.readable else None
        judge = self._judge_for(item, opened.final_url)
        children: list[tuple[str, str | None]] = []
        rules = ChildRules(item.url)
        for batch in batched(stored.records):
            if kind == "sitemapindex":
                self._index_records(batch, judge, tally, children, rules)
            elif kind is not None:
                yield make(batch, item.url, judge, tally, kind)
                self._progress()
        tally.records, tally.without_loc = previous.records, content.without_loc
        for code, detail in content.problems:
            self._problem(item.url, code, detail)
        problems = [*content.problems, *self._refusals(item, judge)]
        self._tally_problems(item, kind, tally)
        self._rule_problems(item, rules)
        content = FileContent(
            tuple(problems),
            tuple(children),
            tally.without_loc,
            tally.duplicates,
            tuple(tally.repeated),
        )
        record = self._file_record(item, opened, kind, tally, content)
        self.files.append(replace(record, gzipped=previous.gzipped, reused=True))
        _log.info(
            "not modified %s: %s, %s entries reused, %s URLs kept",
            item.url,
            kind or "not a sitemap",
            f"{len(stored.records):,}",
            f"{tally.emitted:,}",
        )

    def _refusals(self, item: _Pending, judge: LocJudge) -> list[tuple[str, str]]:
        """Report the locs the judge refused; the problems reported."""
        found: list[tuple[str, str]] = []

        def report(sitemap: str, code: str, detail: str) -> None:
            found.append((code, detail))
            self._problem(sitemap, code, detail)

        judge.report(item.url, report)
        return found

    def _open(self, item: _Pending) -> _Opened | None:
        fetched_at = datetime.now(UTC)
        if item.local_path is not None:
            try:
                body = read_local_file(item.local_path, self.options.http.max_bytes)
            except OSError as exc:
                self._failed(item, fetched_at, None, "http-error", f"cannot read file: {exc}")
                return None
            return _Opened(body, fetched_at)
        assert self._client is not None
        stored = self._stored(item.url)
        headers = stored.headers if stored is not None else None
        response = self._client.get(item.url, headers=headers)
        if isinstance(response, FetchFailure):
            self._failed(item, fetched_at, response.status, response.code, response.detail)
            return None
        if response.redirects:  # on the same origin, or the client would have refused it
            hops = len(response.redirects)
            moved = "a redirect" if hops == 1 else f"{hops} redirects"
            self._problem(item.url, "redirect", f"followed {moved} to {response.final_url}")
        if response.status == 304 and stored is None:
            response.close()
            detail = f"{_status_text(304)} to a request that asked for no comparison"
            self._failed(item, fetched_at, 304, "http-error", detail)
            return None
        if not response.ok and response.status != 304:
            status = response.status
            wall = wall_of(status, response.headers, body_head(response.body))
            response.close()
            if wall is not None:
                self._failed(item, fetched_at, status, "blocked", wall.detail())
            else:
                self._failed(item, fetched_at, status, "http-error", _status_text(status))
            return None
        opened = _Opened(
            response.body,
            response.fetched_at,
            response.status,
            response.final_url,
            response.header("date"),
            response.header("last-modified"),
            response.header("etag"),
            headers=response.headers,
        )
        if response.status == 304 and stored is not None:
            for _ in response.body:  # a 304 has no body: this only frees the connection
                pass
            opened.last_modified_header = opened.last_modified_header or (
                stored.file.last_modified_header
            )
            opened.etag = opened.etag or stored.file.etag
            opened.reused = stored
        return opened

    def _stored(self, url: str) -> StoredFile | None:
        """What the previous walk read of ``url``, when it can be asked about conditionally."""
        if self._previous is None:
            return None
        stored = self._previous.stored(url)
        return stored if stored is not None and stored.headers else None

    def _failed(
        self, item: _Pending, fetched_at: datetime, status: int | None, code: str, detail: str
    ) -> None:
        self._problem(item.url, code, detail)
        self.files.append(
            SitemapFile(
                url=item.url,
                kind="unreadable",
                parent=item.parent,
                via_robots=item.via_robots,
                fetched_at=fetched_at,
                status=status,
                index_lastmod=item.index_lastmod,
            )
        )

    def _judge_for(self, item: _Pending, final_url: str | None) -> LocJudge:
        if item.local_path is not None:
            return LocJudge(None)
        origins = {origin_of(item.url), *item.extra_origins}
        if final_url:
            origins.add(origin_of(final_url))
        return LocJudge(origins)

    def _index_records(
        self,
        batch: list[Record],
        judge: LocJudge,
        tally: Tally,
        written: list[tuple[str, str | None]],
        rules: ChildRules,
    ) -> None:
        """An index's records: its children (kept as written too, for a later reuse),
        each seen by Google's index rules."""
        tally.records += len(batch)
        for loc, raw, _news in batch:
            if not loc:
                tally.without_loc += 1
                continue
            rules.see(loc)
            if not judge.accepts(loc):
                continue
            parsed = self._pages.date(raw, "sitemapindex") if raw else None
            if raw and parsed is None:
                tally.invalid += 1
                tally.first_invalid = tally.first_invalid or raw
            tally.children.append((loc, parsed))
            written.append((loc, raw))

    def _children(self, item: _Pending, tally: Tally) -> list[_Pending]:
        """An index's children, newest first by their index lastmod (undated last)."""
        if not tally.children:
            return []
        ordered = sorted(tally.children, key=lambda c: c[1].value if c[1] else _EPOCH, reverse=True)
        chain = (*item.chain, item.url)
        return [
            _Pending(
                url=loc,
                parent=item.url,
                via_robots=item.via_robots,
                index_lastmod=parsed.value if parsed else None,
                chain=chain,
                extra_origins=item.extra_origins,
            )
            for loc, parsed in ordered
        ]

    def _tally_problems(self, item: _Pending, kind: str | None, tally: Tally) -> None:
        index = item.parent if item.chain else None
        limit = self.options.max_urls_per_file
        for code, detail in tally_problems(kind, tally, max_urls=limit, listed_by_index=index):
            self._problem(item.url, code, detail)

    def _rule_problems(self, item: _Pending, rules: ChildRules) -> None:
        """Report the index rules its children broke (computed again on a replay)."""
        for code, detail in rules.problems():
            self._problem(item.url, code, detail)

    def _file_record(
        self,
        item: _Pending,
        opened: _Opened,
        kind: str | None,
        tally: Tally,
        content: FileContent | None = None,
    ) -> SitemapFile:
        return SitemapFile(
            url=item.url,
            kind=kind or "unreadable",
            parent=item.parent,
            via_robots=item.via_robots,
            fetched_at=opened.fetched_at,
            status=opened.status,
            final_url=opened.final_url,
            date_header=opened.date_header,
            last_modified_header=opened.last_modified_header,
            etag=opened.etag,
            index_lastmod=item.index_lastmod,
            records=tally.records,
            urls=tally.emitted,
            bytes_read=opened.body.bytes_read,
            gzipped=opened.body.gzipped,
            readable=kind is not None,
            content=content if opened.status is not None else None,  # not for a local file
        )


def _status_text(status: int) -> str:
    reason = http.client.responses.get(status, "")
    return f"HTTP {status} {reason}".rstrip()
