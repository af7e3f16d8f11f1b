"""Which redirects the HTTP door follows: the origin rule, and a caller's own veto.

The origin is scheme, host and port. An https -> http downgrade is never followed; another
port is another origin; the http -> https upgrade of the same host on the default ports is
the one step allowed (it cannot be served on loopback without ports 80 and 443, so it is
checked on ``same_origin`` itself).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from auditor.http import FetchFailure, HttpClient, HttpOptions, Response, same_origin
from tests.loopback import TLS_CERT, LoopbackServer, send

XML = b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>'


@pytest.fixture
def plain() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


@pytest.fixture
def tls() -> Iterator[LoopbackServer]:
    with LoopbackServer(tls=True) as server:
        yield server


def moved(location: str):
    return lambda h: send(h, 301, b"", "text/plain", {"Location": location})


def get(url: str, **kwargs: object) -> Response | FetchFailure:
    """GET with a client that trusts the loopback certificate; the body is read whole."""
    with HttpClient(HttpOptions(timeout=5, retries=0)) as client:
        client.session.trust_env = False  # else $REQUESTS_CA_BUNDLE overrides verify
        client.session.verify = str(TLS_CERT)
        result = client.get(url, **kwargs)  # type: ignore[arg-type]
        if isinstance(result, Response):
            b"".join(result.body)
        return result


def test_a_redirect_within_an_https_origin_is_followed(tls):
    tls.routes.update({"/old.xml": moved("/new.xml"), "/new.xml": lambda h: send(h, 200, XML)})
    result = get(tls.url("/old.xml"))
    assert isinstance(result, Response), result
    assert (result.status, result.final_url) == (200, tls.url("/new.xml"))


def test_a_redirect_to_another_port_of_the_same_host_is_not_followed(plain):
    with LoopbackServer() as other:
        other.routes["/x.xml"] = lambda h: send(h, 200, XML)
        plain.routes["/s.xml"] = moved(other.url("/x.xml"))
        result = get(plain.url("/s.xml"))
        assert isinstance(result, FetchFailure)
        assert result.code == "redirect"
        assert "port" in result.detail and other.url("/x.xml") in result.detail
        assert other.log == []


def test_an_https_to_http_downgrade_is_never_followed(tls, plain):
    plain.routes["/x.xml"] = lambda h: send(h, 200, XML)
    tls.routes["/s.xml"] = moved(plain.url("/x.xml"))
    result = get(tls.url("/s.xml"))
    assert isinstance(result, FetchFailure)
    assert result.code == "redirect"
    assert "down to http" in result.detail
    assert plain.log == []


def test_a_downgrade_on_the_same_port_is_refused_before_any_request(tls):
    tls.routes["/s.xml"] = moved(tls.url("/x.xml").replace("https:", "http:"))
    result = get(tls.url("/s.xml"))
    assert isinstance(result, FetchFailure)
    assert (result.code, result.status) == ("redirect", 301)
    assert "down to http" in result.detail
    assert tls.paths() == ["/s.xml"]


def test_a_downgrade_later_in_the_chain_is_refused_too(tls, plain):
    plain.routes["/x.xml"] = lambda h: send(h, 200, XML)
    tls.routes.update({"/a.xml": moved("/b.xml"), "/b.xml": moved(plain.url("/x.xml"))})
    result = get(tls.url("/a.xml"))
    assert isinstance(result, FetchFailure) and result.code == "redirect"
    assert plain.log == []


@pytest.mark.parametrize(
    ("base", "target", "same"),
    [
        ("http://example.com/a", "http://example.com:80/b", True),
        ("https://example.com/a", "https://EXAMPLE.com:443/b", True),
        ("http://example.com/a", "https://example.com/b", True),  # the upgrade to TLS
        ("http://example.com:80/a", "https://example.com:443/b", True),
        ("https://example.com/a", "http://example.com/b", False),  # a downgrade, never
        ("https://example.com:8443/a", "http://example.com:8443/b", False),
        ("http://example.com:8080/a", "https://example.com:8080/b", False),  # not default ports
        ("http://example.com:8080/a", "https://example.com/b", False),
        ("http://example.com/a", "http://example.com:8080/b", False),  # another port
        ("http://example.com/a", "http://www.example.com/b", False),
        ("http://example.com/a", "ftp://example.com/b", False),
        ("http://example.com/a", "http:///b", False),
        ("http://example.com/a", "http://example.com:99999/b", False),
    ],
)
def test_same_origin(base, target, same):
    assert same_origin(base, target) is same


# -- the caller's veto (robots.txt, for the sampler) --------------------------------------------


def test_may_follow_is_asked_about_every_hop_before_it_is_requested(plain):
    plain.routes.update(
        {
            "/a": moved("/b"),
            "/b": moved(plain.url("/c")),
            "/c": lambda h: send(h, 200, b"<html></html>", "text/html"),
        }
    )
    asked: list[str] = []

    def anything(target: str) -> str | None:
        asked.append(target)
        return None

    result = get(plain.url("/a"), may_follow=anything)
    assert isinstance(result, Response) and result.status == 200
    assert asked == [plain.url("/b"), plain.url("/c")]  # not the first URL: the caller's
    assert plain.paths() == ["/a", "/b", "/c"]


def test_a_hop_may_follow_refuses_is_never_requested(plain):
    plain.routes.update(
        {
            "/page": moved("/hop"),
            "/hop": moved("/private/page"),
            "/private/page": lambda h: send(h, 200, b"<html></html>", "text/html"),
        }
    )

    def no_private(target: str) -> str | None:
        return f"disallowed: {target}" if "/private/" in target else None

    result = get(plain.url("/page"), may_follow=no_private)
    assert isinstance(result, FetchFailure)
    assert (result.code, result.status) == ("refused", 301)
    assert result.detail == f"disallowed: {plain.url('/private/page')}"
    assert result.url == plain.url("/page")
    assert plain.paths() == ["/page", "/hop"]
