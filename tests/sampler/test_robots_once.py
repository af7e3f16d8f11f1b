"""robots.txt fetched once: the walk's response is what the sampler's policy is made of.

Whatever a server answers for robots.txt, the policy made from the walk's response is
the policy the sampler would have reached fetching it again (RFC 9309: 4xx allows all,
5xx, 429 or no answer disallows all, endless redirects allow all), and with it the
sampler asks the server nothing more about robots.txt.
"""

from __future__ import annotations

import pytest

from auditor.http import HttpClient, HttpOptions
from auditor.sampler import SampleOptions, sample_site
from auditor.sampler.robots import fetch_robots, policy_of
from auditor.walker import Walk
from auditor.walker.inventory import entries_to_dataframe
from tests.loopback import send

BOM_RULES = b"\xef\xbb\xbfUser-agent: auditor\nDisallow: /private/\nCrawl-delay: 0.01\n"


def _status(code: int):
    return lambda h: send(h, code, b"no", "text/plain")


def _loop(handler) -> None:
    target = "/robots-a.txt" if handler.path == "/robots.txt" else "/robots.txt"
    send(handler, 301, b"", "text/plain", {"Location": target})


def _cut(handler) -> None:  # announces more than it sends, then hangs up
    handler.send_response(200)
    handler.send_header("Content-Length", "5000")
    handler.end_headers()
    handler.wfile.write(b"User-agent: *\nDisallow: /\n")
    handler.close_connection = True


ANSWERS = {
    "the file": None,
    "a byte-order mark": lambda h: send(h, 200, BOM_RULES, "text/plain"),
    "404": _status(404),
    "410": _status(410),
    "503": _status(503),
    "429": _status(429),
    "a redirect loop": _loop,
    "a body cut short": _cut,
}


def _client() -> HttpClient:
    return HttpClient(HttpOptions(retries=0, timeout=5))


@pytest.mark.parametrize("answer", ANSWERS.values(), ids=ANSWERS.keys())
def test_the_walks_response_makes_the_samplers_policy(serve, answer):
    routes = {} if answer is None else {"/robots.txt": answer, "/robots-a.txt": answer}
    server = serve("sites/sample-polite", routes=routes)
    walk = Walk(server.origin, client=_client())
    list(walk)

    assert walk.robots is not None and walk.robots.url == server.url("/robots.txt")
    from_walk = policy_of(walk.robots)
    fetched = fetch_robots(_client(), server.origin)

    assert (from_walk.rule, from_walk.detail) == (fetched.rule, fetched.detail)
    assert from_walk.crawl_delay == fetched.crawl_delay
    for path in ("/private/secret.html", "/blog/a.html", "/report.pdf"):
        assert from_walk.allows(server.url(path)) == fetched.allows(server.url(path)), path


def test_an_unreachable_robots_txt_disallows_all(serve):
    server = serve("sites/sample-polite")
    origin = server.origin
    server.close()
    walk = Walk(origin, client=_client())
    list(walk)

    assert walk.robots is not None and walk.robots.failure is not None
    policy = policy_of(walk.robots)
    assert policy.rule == "disallow-all" and "unreachable" in policy.detail


def test_the_sampler_given_the_walks_robots_txt_does_not_fetch_it_again(serve):
    server = serve("sites/sample-polite")
    walk = Walk(server.origin, client=_client())
    entries = entries_to_dataframe(walk)
    options = SampleOptions(sample=12, delay=0.0, sequential=False)

    run = sample_site(server.origin, entries, options, seed=1, robots=walk.robots)

    assert server.paths().count("/robots.txt") == 1
    assert run.robots.rule == "parsed" and run.robots.crawl_delay == 0.3
    assert run.skipped_robots >= 1  # the rules of the one fetch were obeyed
    disallowed = {"/private/secret.html", "/private/ok.html.bak", "/report.pdf"}
    assert not disallowed & set(server.paths())


def test_without_the_walks_robots_txt_the_sampler_fetches_it(serve):
    server = serve("sites/sample-polite")
    walk = Walk(server.url("/sitemap.xml"), client=_client())  # a sitemap URL: no robots.txt
    entries = entries_to_dataframe(walk)
    assert walk.robots is None and "/robots.txt" not in server.paths()

    run = sample_site(server.origin, entries, SampleOptions(sample=6, delay=0.0), seed=1)

    assert server.paths().count("/robots.txt") == 1
    assert run.robots.rule == "parsed"
