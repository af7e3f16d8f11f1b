"""A site written without a scheme (``example.com``, ``127.0.0.1:8080``): which origin
it names, the one rule of every command.

- A command that reaches the site (``audit`` of one site, ``inspect``, ``walk``,
  ``page``) tries https first, as browsers do; when the TLS handshake shows the server
  speaks no TLS there (a plain-HTTP server on that port), or nothing listens on 443 for
  a name written without a port, it uses http and says so on stderr
  (``127.0.0.1:8080: no TLS there, using http://127.0.0.1:8080``). A certificate
  refused is never a reason to fall back: that server speaks TLS, and taking its
  plain-HTTP twin instead would downgrade the audit without a word. Finding out costs one
  robots.txt request over https (the walk asks for it again); write the scheme to
  spare it.
- A fleet (several sites, ``--sites`` files) takes https for a bare name without asking:
  a site's name (its history, the fleet's plan) is fixed before its audit starts on a
  worker. A plain-HTTP site fails as ``unreachable`` with the hint ``try http://...``.
- A command that reads the history (``history``, ``report``, ``changed``, ``plan``,
  ``coverage``) takes the https origin, or the http one when only that one is in the
  history.

Touches: the network, the database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from auditor.http.causes import CONNECTION_FAILED, NO_TLS, REFUSED
from auditor.walker.discovery import Target

if TYPE_CHECKING:
    from auditor.history import History
    from auditor.http import HttpOptions

__all__ = ["no_tls_hint", "plain_http", "settled", "site_in_history"]

#: robots.txt is enough to tell whether https answers: a probe reads no more of it.
_PROBE_BYTES = 1


def plain_http(url: str) -> str:
    """``url`` with http for https."""
    return "http://" + url.removeprefix("https://")


def settled(target: Target, options: HttpOptions, say: Callable[[str], None]) -> Target:
    """The target to use for ``target``: itself, or, when its scheme was not written and
    https is not there (module docstring), its http twin, said through ``say``."""
    if target.scheme_given or target.site is None:
        return target
    if not _falls_back(target.site, options):
        return target
    plain = replace(target, value=plain_http(target.value), scheme_given=True)
    written = target.value.removeprefix("https://")
    say(f"{written}: no TLS there, using {plain.value}")
    return plain


def _falls_back(site: str, options: HttpOptions) -> bool:
    """True when ``site``'s https robots.txt got no TLS answer: no TLS spoken on that
    port, or (no port written) nothing listening on 443."""
    from auditor.http import FetchFailure, HttpClient

    with HttpClient(options) as client:
        answer = client.get(site + "/robots.txt", max_bytes=_PROBE_BYTES)
    if not isinstance(answer, FetchFailure):
        answer.close()
        return False
    if answer.detail == CONNECTION_FAILED + NO_TLS:
        return True
    return answer.detail == CONNECTION_FAILED + REFUSED and urlsplit(site).port is None


def no_tls_hint(site: str, cause: str) -> str:
    """``cause`` with what to write instead when an https site spoke no TLS."""
    if cause == NO_TLS and site.startswith("https://"):
        return f"{cause}; try {plain_http(site)}"
    return cause


def site_in_history(text: str, history: History) -> str:
    """The site origin ``text`` names in ``history`` (module docstring)."""
    from auditor.fleet.sites import crawl_list

    found = crawl_list([text])
    (site,) = found.known_as({r.origin for r in history.sites()})
    return site
