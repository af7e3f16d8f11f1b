"""Proxies: one given (``--proxy URL``), else the environment's, chosen explicitly.

The door's requests session does not trust the environment on its own (requests'
``trust_env`` is off: no ``~/.netrc`` credentials sent to sites behind auditor's back).
What it honours instead is spelt out here:

- ``HttpOptions.proxy``: every request goes through it, robots.txt included, whatever
  ``NO_PROXY`` says (it was asked for by name); ``http://``, ``https://`` (TLS to the
  proxy), ``socks5://`` (names resolved here) and ``socks5h://`` (names resolved by
  the proxy); SOCKS needs the ``socks`` extra (PySocks);
- otherwise, when ``HttpOptions.env_proxy`` (the default), ``HTTP_PROXY``,
  ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` (either case), as curl and requests
  read them, once a host for each client (:class:`ProxyChooser`: reading the whole
  environment twice a request was a tenth of a small site's CPU);
- ``REQUESTS_CA_BUNDLE`` / ``CURL_CA_BUNDLE``: the CA bundle to verify TLS with (a
  TLS-inspecting proxy's), as requests reads them.

A proxy's credentials (``http://user:secret@proxy:3128``) are masked wherever the
proxy is named (:func:`masked`).

Touches: nothing.
"""

from __future__ import annotations

import importlib.util
import os
from urllib.parse import urlsplit

__all__ = [
    "PROXY_SCHEMES",
    "ProxyChooser",
    "ProxyError",
    "ca_bundle",
    "check_proxy",
    "masked",
    "proxies_for",
]

PROXY_SCHEMES = ("http", "https", "socks5", "socks5h", "socks4", "socks4a")


class ProxyError(ValueError):
    """A proxy URL that cannot be used; the message masks its password."""


def check_proxy(url: str) -> str:
    """``url`` when it names a usable proxy; raises :class:`ProxyError` saying why not."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - validates the port
    except ValueError as exc:
        raise ProxyError(f"not a proxy URL: {masked(url)} ({exc})") from exc
    scheme = parts.scheme.lower()
    if scheme not in PROXY_SCHEMES or not parts.hostname:
        raise ProxyError(
            f"not a proxy URL: {masked(url)} (give scheme://host:port, the scheme one of "
            f"{', '.join(PROXY_SCHEMES)})"
        )
    if scheme.startswith("socks") and importlib.util.find_spec("socks") is None:
        raise ProxyError(
            f"a SOCKS proxy needs PySocks: pip install 'auditor[socks]' ({masked(url)})"
        )
    return url


def masked(url: str) -> str:
    """``url`` with the password of its user part replaced by ``***``.

    Read without a URL parser, which gives up on a malformed URL (a ``?`` or ``/`` in
    the password) and would then show it whole: everything before the last ``@`` after
    the scheme is the user part, its name kept up to the first ``:``.
    """
    head, sep, rest = url.partition("://")
    if not sep:
        head, rest = "", url
    if "@" not in rest:
        return url
    userinfo, _, after = rest.rpartition("@")
    name, colon, _ = userinfo.partition(":")
    return f"{head}{sep}{name}{':***' if colon else ''}@{after}"


class ProxyChooser:
    """The ``proxies`` of each request of one client: :func:`proxies_for`, remembered
    per host and port (what ``NO_PROXY`` is matched against) for the client's life."""

    #: Hosts remembered at most (a client talks to a site's few hosts; a crawl of
    #: many hosts starts over past this many).
    MAX_HOSTS = 1024

    def __init__(self, proxy: str | None, *, env: bool) -> None:
        self.proxy = proxy
        self.env = env
        self._by_host: dict[str, dict[str, str]] = {}

    def __call__(self, url: str) -> dict[str, str]:
        """The proxies for a request to ``url``."""
        if self.proxy is not None or not self.env:
            return proxies_for(url, self.proxy, env=self.env)
        host = urlsplit(url).netloc.rpartition("@")[2].lower()
        found = self._by_host.get(host)
        if found is None:
            if len(self._by_host) >= self.MAX_HOSTS:
                self._by_host.clear()
            found = self._by_host[host] = proxies_for(url, None, env=True)
        return dict(found)


def proxies_for(url: str, proxy: str | None, *, env: bool) -> dict[str, str]:
    """The ``proxies`` mapping requests is given for one request to ``url``."""
    if proxy is not None:
        return {"http": proxy, "https": proxy}
    if not env:
        return {}
    import requests.utils  # here: checking a --proxy needs no network stack

    return dict(requests.utils.get_environ_proxies(url, no_proxy=None))


def ca_bundle() -> str | bool:
    """The CA bundle the environment names (``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE``),
    else True (the bundle requests ships)."""
    return os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
