"""Sampler: choose a polite, stratified sample of a site's pages and fetch them.

robots.txt is obeyed (Google's rules), one request per host at a time with a
delay between requests, and every page that cannot be used is a value with its
reason, never an exception.
"""

from __future__ import annotations

from auditor.sampler.choose import DEFAULT_SAMPLE, SampledPage, choose_sample
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
