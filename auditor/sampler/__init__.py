"""Sampler: choose a polite, stratified sample of a site's pages and fetch them.

robots.txt is obeyed (Google's rules), one request per host at a time with a
delay between requests, and every page that cannot be used is a value with its
reason, never an exception.

Touches: nothing.
"""

from __future__ import annotations

import typing

import auditor._lazy as _lazy

if typing.TYPE_CHECKING:
    from auditor.sampler.choose import SampledPage, choose_sample
    from auditor.sampler.defaults import DEFAULT_SAMPLE
    from auditor.sampler.fetch import (
        PAGE_MAX_BYTES,
        FetchedPage,
        PageFetcher,
        download_page,
        evidence_of,
    )
    from auditor.sampler.pacing import DEFAULT_DELAY, HostPacer
    from auditor.sampler.robots import RobotsPolicy, fetch_robots
    from auditor.sampler.run import SampleOptions, SampleRun, sample_site

_EXPORTS = {
    "DEFAULT_SAMPLE": "auditor.sampler.defaults",
    "SampledPage": "auditor.sampler.choose",
    "choose_sample": "auditor.sampler.choose",
    "PAGE_MAX_BYTES": "auditor.sampler.fetch",
    "FetchedPage": "auditor.sampler.fetch",
    "PageFetcher": "auditor.sampler.fetch",
    "download_page": "auditor.sampler.fetch",
    "evidence_of": "auditor.sampler.fetch",
    "DEFAULT_DELAY": "auditor.sampler.pacing",
    "HostPacer": "auditor.sampler.pacing",
    "RobotsPolicy": "auditor.sampler.robots",
    "fetch_robots": "auditor.sampler.robots",
    "SampleOptions": "auditor.sampler.run",
    "SampleRun": "auditor.sampler.run",
    "sample_site": "auditor.sampler.run",
}
__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DEFAULT_DELAY",
    "DEFAULT_SAMPLE",
    "PAGE_MAX_BYTES",
    "FetchedPage",
    "HostPacer",
    "PageFetcher",
    "RobotsPolicy",
    "SampleOptions",
    "SampleRun",
    "SampledPage",
    "choose_sample",
    "download_page",
    "evidence_of",
    "fetch_robots",
    "sample_site",
]
