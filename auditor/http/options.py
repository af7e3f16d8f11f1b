"""How the HTTP client behaves, and what a failed request returns: the client's
settings and values without the client (no requests, no urllib3), so that a command
line can offer ``--timeout`` and a local file can be walked without loading the
network stack. :mod:`auditor.http.client` re-exports every name here.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from auditor import __version__
from auditor.http.body import DEFAULT_MAX_BYTES
from auditor.http.extra_headers import check_header
from auditor.http.proxy import check_proxy, masked

__all__ = [
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
]

#: Total seconds one request may take, connect to last byte, its redirects,
#: retries and their waits included.
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_REDIRECTS = 5
#: Retries after the first attempt, for 429 and 5xx only.
DEFAULT_RETRIES = 2
#: A Retry-After longer than this is not waited for: the failure is returned (so is
#: one that would end past the request's deadline).
DEFAULT_MAX_RETRY_WAIT = 60.0
#: No contact: the User-Agent then names auditor and its version only. auditor has no
#: project page a site's administrator could write to about someone else's crawl; whoever
#: runs it says how to reach them with ``--contact`` (a URL or an e-mail address).
DEFAULT_CONTACT = ""
#: Accept headers: what the walker asks for, and what the sampler asks for.
SITEMAP_ACCEPT = "application/xml,text/xml,text/plain,*/*;q=0.8"
PAGE_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"

#: Asked about each redirect target before it is requested: None to follow it, or the
#: reason not to (the request then ends in a ``refused`` FetchFailure).
MayFollow = Callable[[str], str | None]


@dataclass(frozen=True)
class HttpOptions:
    """How the client behaves; every field has a named default."""

    timeout: float = DEFAULT_TIMEOUT
    max_bytes: int = DEFAULT_MAX_BYTES
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    retries: int = DEFAULT_RETRIES
    backoff: float = 1.0
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT
    contact: str = DEFAULT_CONTACT
    accept: str = SITEMAP_ACCEPT
    #: Every request through this proxy (``http://``, ``https://``, ``socks5://``,
    #: ``socks5h://``; see :mod:`auditor.http.proxy`); None: the environment's, if any.
    proxy: str | None = field(default=None, repr=False)
    #: ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` honoured when no
    #: ``proxy`` is given.
    env_proxy: bool = True
    #: ``(name, value)`` pairs sent on every request (cookies, a partner's API key): never
    #: a User-Agent (see :mod:`auditor.http.extra_headers`); the values never logged.
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if self.proxy is not None:
            check_proxy(self.proxy)
        object.__setattr__(self, "headers", tuple(check_header(*h) for h in self.headers))

    @property
    def user_agent(self) -> str:
        """The User-Agent header: tool and version, and the contact when one is given."""
        tool = f"auditor/{__version__}"
        return f"{tool} (+{self.contact})" if self.contact else tool

    @property
    def described(self) -> str:
        """How requests leave, for a log line: the proxy (password masked) and the names
        of the added headers, never their values."""
        if self.proxy:
            via = masked(self.proxy)
        else:
            via = "the environment's proxy, if any" if self.env_proxy else "no proxy"
        names = ", ".join(name for name, _ in self.headers) or "none"
        return f"via {via}; added headers: {names}"


@dataclass(frozen=True)
class FetchFailure:
    """A request that produced no usable response, with a walker problem code."""

    url: str
    code: str  # http-error | timeout | redirect | too-many-redirects | refused (by may_follow)
    detail: str
    status: int | None = None
