"""Bot walls and soft errors: a response that is a challenge or block page, named.

A site behind a bot manager may answer a crawler with a page that is not the one asked
for: Cloudflare's "Just a moment...", Akamai's "Access Denied", a DataDome or
PerimeterX (HUMAN) captcha, Imperva's incident page, an AWS WAF captcha. Status codes do
not tell them apart (403 and 503 are usual, 200 happens), so :func:`wall_of` reads the
response's headers and the first bytes of its body. Such a response is a ``blocked``
answer: never parsed as a sitemap or as page evidence, never a content change.

Each vendor is recognised by signals that appear on its challenge and block pages and
not on the pages it protects (its sensor scripts, e.g. Cloudflare's
``/cdn-cgi/challenge-platform/`` or PerimeterX's ``_pxAppId``, are on every protected
page and prove nothing alone). A generic captcha (reCAPTCHA, hCaptcha, Turnstile) is a
wall only when the page is about it: an error status, or a title that asks whether you
are human, since contact forms carry captchas too.

:func:`html_kind` names what an HTML page served where a sitemap was expected is
instead: a ``login``, ``consent`` or ``error`` page.

Touches: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

__all__ = ["WALL_PROBE_BYTES", "Wall", "body_head", "html_kind", "wall_of"]

#: Bytes of a body read to recognise a wall: challenge pages put their tells in the
#: head and the first scripts, well within this.
WALL_PROBE_BYTES = 64 * 1024

# Every repetition bounded: a hostile body full of "<title" or "<input" costs linear time.
_TITLE = re.compile(rb"<title[^>]{0,200}>(.{0,300}?)</title", re.I | re.S)
_CHALLENGE_STATUSES = frozenset({401, 403, 405, 429, 503})


@dataclass(frozen=True)
class Wall:
    """A challenge or block page: ``vendor`` (None when generic), ``kind``
    (``challenge``, ``captcha`` or ``block``) and the HTTP ``status`` it came with."""

    vendor: str | None
    kind: str
    status: int | None

    def detail(self) -> str:
        """E.g. ``Cloudflare challenge page (HTTP 403)``."""
        who = f"{self.vendor} " if self.vendor else ""
        status = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{who}{self.kind} page{status}"


class _Response:
    """What the rules read: lower-cased header names and values, the body's head, its
    title."""

    def __init__(self, status: int | None, headers: Mapping[str, str], head: bytes) -> None:
        self.status = status
        self.headers = {k.lower(): str(v).lower() for k, v in headers.items()}
        self.body = head[:WALL_PROBE_BYTES].lower()
        found = _TITLE.search(self.body)
        self.title = found.group(1).strip() if found else b""

    def has(self, *needles: bytes) -> bool:
        return any(n in self.body for n in needles)

    def server(self, *names: str) -> bool:
        value = self.headers.get("server", "")
        return any(name in value for name in names)

    def refused(self) -> bool:
        return self.status in _CHALLENGE_STATUSES


def _cloudflare(r: _Response) -> str | None:
    if r.headers.get("cf-mitigated") == "challenge":
        return "challenge"
    if r.has(b"window._cf_chl_opt", b"cf-browser-verification", b'id="challenge-form"'):
        return "challenge"
    served = r.server("cloudflare") or r.has(b"cloudflare")  # one search, not three
    if served and r.has(b"cf-error-details", b"sorry, you have been blocked", b"error code: 1020"):
        return "block"
    if r.title in (b"just a moment...", b"attention required! | cloudflare"):
        return "challenge"
    return None


def _akamai(r: _Response) -> str | None:
    if r.title == b"access denied" and (
        r.server("akamaighost")
        or r.has(b"errors.edgesuite.net", b"edgesuite.net", b"reference&#32;&#35;", b"reference #")
    ):
        return "block"
    if r.refused() and r.has(b"_abck") and r.has(b"bm-verify"):
        return "challenge"
    return None


def _datadome(r: _Response) -> str | None:
    if r.has(b"captcha-delivery.com"):
        return "captcha"
    if "x-datadome" in r.headers and r.refused():
        return "block"
    return None


def _perimeterx(r: _Response) -> str | None:
    if r.has(b'id="px-captcha"', b"px-captcha-wrapper", b"/captcha/captcha.js?a=c"):
        return "captcha"
    if r.title == b"access to this page has been denied" and r.has(b"_pxappid", b"perimeterx"):
        return "block"
    return None


def _imperva(r: _Response) -> str | None:
    if r.has(b"incapsula incident id", b"_incapsula_resource"):
        return "block"
    return None


def _aws_waf(r: _Response) -> str | None:
    action = r.headers.get("x-amzn-waf-action")
    if action in ("captcha", "challenge"):
        return action
    if r.refused() and r.has(b"awswafintegration", b"awswaf.com"):
        return "captcha"
    return None


def _sucuri(r: _Response) -> str | None:
    if r.has(b"sucuri website firewall - access denied") or (
        "x-sucuri-id" in r.headers and r.refused() and r.has(b"sucuri")
    ):
        return "block"
    return None


def _ddos_guard(r: _Response) -> str | None:
    if r.server("ddos-guard") and (r.refused() or r.title == b"ddos-guard"):
        return "challenge"
    return None


_HUMAN_TITLE = re.compile(
    rb"captcha|are you (a )?(human|robot)|verify(ing)? (that )?you are|bot (check|detection)|"
    rb"security check|checking your browser|access denied|unusual traffic"
)
_CAPTCHAS = (b"g-recaptcha", b"google.com/recaptcha", b"hcaptcha.com", b"h-captcha",
             b"challenges.cloudflare.com/turnstile", b"cf-turnstile")  # fmt: skip


def _generic(r: _Response) -> str | None:
    about_it = bool(_HUMAN_TITLE.search(r.title))
    if (r.refused() or about_it) and r.has(*_CAPTCHAS):
        return "captcha"
    return None


_VENDORS: tuple[tuple[str | None, Callable[[_Response], str | None]], ...] = (
    ("Cloudflare", _cloudflare),
    ("DataDome", _datadome),
    ("PerimeterX/HUMAN", _perimeterx),
    ("Akamai", _akamai),
    ("Imperva", _imperva),
    ("AWS WAF", _aws_waf),
    ("Sucuri", _sucuri),
    ("DDoS-Guard", _ddos_guard),
    (None, _generic),
)


def body_head(chunks: Iterable[bytes], limit: int = WALL_PROBE_BYTES) -> bytes:
    """The first ``limit`` bytes of a body (what is read of an error response to name
    it); the rest is left unread."""
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        parts.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(parts)[:limit]


#: The last response named, and its wall: a page is named twice, as it is fetched and as
#: its evidence is read (its head compared, not hashed: 64 KiB). One tuple, replaced
#: whole, so that threads naming pages at once each read a consistent one.
_last: tuple[int | None, list[tuple[str, str]], bytes, Wall | None] | None = None


def wall_of(status: int | None, headers: Mapping[str, str], head: bytes) -> Wall | None:
    """The wall a response is (module docstring), or None: from its ``status``, its
    ``headers`` and the first :data:`WALL_PROBE_BYTES` of its body (``head``)."""
    global _last
    items, probe = list(headers.items()), head[:WALL_PROBE_BYTES]  # (probe: head, if short)
    last = _last
    if (
        last is not None
        and last[2] == probe
        and last[1] == items
        and type(last[0]) is type(status)
        and last[0] == status
    ):
        return last[3]
    wall = _named(_Response(status, headers, probe))
    _last = (status, items, probe, wall)
    return wall


def _named(response: _Response) -> Wall | None:
    for vendor, rule in _VENDORS:
        kind = rule(response)
        if kind is not None:
            return Wall(vendor, kind, response.status)
    return None


_PASSWORD = re.compile(rb"<input[^>]{1,300}type\s{0,5}=\s{0,5}[\"']?password")
_LOGIN = re.compile(rb"\b(log ?in|sign ?in|anmelden|connexion|iniciar sesi)")
_CONSENT_TELLS = (b"consent.google.com", b"before you continue to", b"onetrust-consent",
                  b"didomi", b"cookiebot", b"privacy-mgmt.com", b"trustarc", b"consent-manager",
                  b"cookie consent", b"we value your privacy")  # fmt: skip
_ERROR_TITLE = re.compile(rb"\b(404|410|500|502|503|not found|page not found|error)\b")


def html_kind(head: bytes) -> str | None:
    """What an HTML page is where a sitemap was expected: ``login`` (a password form or
    a sign-in title), ``consent`` (a cookie or consent wall), ``error`` (an error page's
    title), or None (some other page)."""
    r = _Response(None, {}, head)
    if _PASSWORD.search(r.body) or _LOGIN.search(r.title):
        return "login"
    if r.has(*_CONSENT_TELLS):
        return "consent"
    if _ERROR_TITLE.search(r.title):
        return "error"
    return None
