"""The one door to the network: every request auditor makes goes through
:class:`~auditor.http.client.HttpClient` (touches the network; nothing else).

The rooms: :mod:`~auditor.http.client` (the client: deadlines, byte caps, redirects,
retries), :mod:`~auditor.http.body` (streamed, capped bodies; local files),
:mod:`~auditor.http.codings` (gzip, deflate, br, zstd), :mod:`~auditor.http.deadline`
(the per-request watchdog), :mod:`~auditor.http.hosts` (one spelling per host),
:mod:`~auditor.http.proxy` and :mod:`~auditor.http.extra_headers` (how requests leave),
:mod:`~auditor.http.conditional` (validators), :mod:`~auditor.http.walls` (bot walls).
This package exports the client's public names, as it always has.

Touches: nothing.
"""

from auditor.http.body import DEFAULT_MAX_BYTES, Body, read_local_file
from auditor.http.client import (
    DEFAULT_CONTACT,
    DEFAULT_MAX_REDIRECTS,
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    PAGE_ACCEPT,
    SITEMAP_ACCEPT,
    FetchFailure,
    HttpClient,
    HttpOptions,
    MayFollow,
    Response,
    retry_after_seconds,
    same_origin,
)
from auditor.http.conditional import conditional_headers

__all__ = [
    "DEFAULT_CONTACT",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_REDIRECTS",
    "DEFAULT_MAX_RETRY_WAIT",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "PAGE_ACCEPT",
    "SITEMAP_ACCEPT",
    "Body",
    "FetchFailure",
    "HttpClient",
    "HttpOptions",
    "MayFollow",
    "Response",
    "conditional_headers",
    "read_local_file",
    "retry_after_seconds",
    "same_origin",
]
