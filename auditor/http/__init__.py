"""The one door to the network: every request auditor makes goes through
:class:`~auditor.http.client.HttpClient` (touches the network; nothing else).

The rooms: :mod:`~auditor.http.client` (the client: deadlines, byte caps, redirects,
retries), :mod:`~auditor.http.body` (streamed, capped bodies; local files),
:mod:`~auditor.http.codings` (gzip, deflate, br, zstd), :mod:`~auditor.http.deadline`
(the per-request watchdog), :mod:`~auditor.http.hosts` (one spelling per host),
:mod:`~auditor.http.proxy` and :mod:`~auditor.http.extra_headers` (how requests leave),
:mod:`~auditor.http.conditional` (validators), :mod:`~auditor.http.walls` (bot walls).
This package exports the client's public names, as it always has; the client itself
(:mod:`~auditor.http.options` holds its settings) loads when first used.

Touches: nothing.
"""

import typing

import auditor._lazy as _lazy

if typing.TYPE_CHECKING:
    from auditor.http.body import DEFAULT_MAX_BYTES, Body, read_local_file
    from auditor.http.client import HttpClient, Response
    from auditor.http.conditional import conditional_headers
    from auditor.http.options import (
        DEFAULT_CONTACT,
        DEFAULT_MAX_REDIRECTS,
        DEFAULT_MAX_RETRY_WAIT,
        DEFAULT_RETRIES,
        DEFAULT_TIMEOUT,
        PAGE_ACCEPT,
        SITEMAP_ACCEPT,
        FetchFailure,
        HttpOptions,
        MayFollow,
    )
    from auditor.http.redirects import retry_after_seconds, same_origin

_OPTIONS = (
    "DEFAULT_CONTACT",
    "DEFAULT_MAX_REDIRECTS",
    "DEFAULT_MAX_RETRY_WAIT",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "PAGE_ACCEPT",
    "SITEMAP_ACCEPT",
    "FetchFailure",
    "HttpOptions",
    "MayFollow",
)
# Each name loads with its room on first use: the client (requests, urllib3) only when a
# request is made, so that options, a local file and host names cost no network stack.
__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        **dict.fromkeys(_OPTIONS, "auditor.http.options"),
        **dict.fromkeys(("DEFAULT_MAX_BYTES", "Body", "read_local_file"), "auditor.http.body"),
        "HttpClient": "auditor.http.client",
        "Response": "auditor.http.client",
        "conditional_headers": "auditor.http.conditional",
        "retry_after_seconds": "auditor.http.redirects",
        "same_origin": "auditor.http.redirects",
    },
)

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
