"""Fuzzing robots.txt: the sampler's policy (auditor/sampler/robots.py) and the walker's
``Sitemap:`` lines (auditor/walker/discovery.py), both fetched over loopback as bytes.

Properties:

- harmless noise (CRLF or CR line ends, comments, blank lines, odd key case, spaces
  around the colon, a leading UTF-8 BOM) never changes what the policy allows: a
  disallowed path stays disallowed;
- the walker finds the same ``Sitemap:`` URLs through the same noise;
- any bytes (binary, huge, endless lines, wildcards galore) give a policy that
  answers every URL, within the byte cap and in bounded time;
- rules within the first 500 KiB hold whatever follows them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from hypothesis import event, given
from hypothesis import strategies as st

from auditor.http import HttpClient, HttpOptions
from auditor.sampler.robots import ROBOTS_MAX_BYTES, RobotsPolicy, fetch_robots
from auditor.walker import Walk, WalkOptions
from tests.fuzz.budget import fuzz
from tests.fuzz.mutations import mutated
from tests.loopback import LoopbackServer, send

AGENTS = ("*", "auditor", "AUDITOR", "googlebot", "otherbot")
_PATH_CHARS = "abc/-_.%*$?=é"


@dataclass(frozen=True)
class Robots:
    """A robots.txt as meant: groups of (agents, rules), sitemaps, a crawl delay."""

    groups: tuple[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], ...]
    sitemaps: tuple[str, ...]


@dataclass(frozen=True)
class Noise:
    """What may be added to a robots.txt without changing a single decision."""

    bom: bool = False
    line_end: str = "\n"
    comment_lines: tuple[int, ...] = ()  # before which lines a comment line goes
    blank_lines: tuple[int, ...] = ()
    trailing_comments: bool = False
    key_case: str = "as-is"  # as-is | upper | lower | title
    colon_spaces: bool = False
    indent: bool = False


paths = st.text(alphabet=_PATH_CHARS, max_size=12).map(lambda p: "/" + p)
rules = st.lists(st.tuples(st.sampled_from(["Allow", "Disallow"]), paths), min_size=1, max_size=6)
groups = st.lists(
    st.tuples(st.lists(st.sampled_from(AGENTS), min_size=1, max_size=2, unique=True), rules),
    min_size=1,
    max_size=4,
)


@st.composite
def robots_files(draw: st.DrawFn) -> Robots:
    drawn = draw(groups)
    sitemaps = draw(
        st.lists(st.text(alphabet="abc/-", max_size=8).map(lambda p: f"/s{p}.xml"), max_size=3)
    )
    return Robots(tuple((tuple(a), tuple(r)) for a, r in drawn), tuple(sitemaps))


noises = st.builds(
    Noise,
    bom=st.just(False),
    line_end=st.sampled_from(["\n", "\r\n", "\r"]),
    comment_lines=st.lists(st.integers(0, 40), max_size=5).map(tuple),
    blank_lines=st.lists(st.integers(0, 40), max_size=5).map(tuple),
    trailing_comments=st.booleans(),
    key_case=st.sampled_from(["as-is", "upper", "lower", "title"]),
    colon_spaces=st.booleans(),
    indent=st.booleans(),
)


def lines_of(robots: Robots, origin: str) -> list[tuple[str, str]]:
    out = []
    for agents, group_rules in robots.groups:
        out += [("User-agent", agent) for agent in agents]
        out += list(group_rules)
    out += [("Sitemap", origin + s) for s in robots.sitemaps]
    return out


def render(robots: Robots, origin: str, noise: Noise = Noise()) -> bytes:
    """The file as bytes, with ``noise`` added (``Noise()`` adds none)."""
    lines = []
    for i, (key, value) in enumerate(lines_of(robots, origin)):
        if i in noise.comment_lines:
            lines.append("# Disallow: / -- a comment, not a rule")
        if i in noise.blank_lines:
            lines.append("")
        key = {"upper": key.upper(), "lower": key.lower(), "title": key.title()}.get(
            noise.key_case, key
        )
        colon = " : " if noise.colon_spaces else ": "
        line = f"{'  ' if noise.indent else ''}{key}{colon}{value}"
        if noise.trailing_comments and key.lower() != "sitemap":
            line += "  # note"
        lines.append(line)
    text = noise.line_end.join(lines) + noise.line_end
    return (b"\xef\xbb\xbf" if noise.bom else b"") + text.encode()


def probes(robots: Robots) -> list[str]:
    """Paths worth asking about: each rule's own path, and neighbours of it."""
    found = {"/", "/a", "/private"}
    for _agents, group_rules in robots.groups:
        for _kind, path in group_rules:
            plain = path.replace("*", "x").rstrip("$")
            found |= {plain, plain + "x", plain[:-1] or "/", plain + "/deeper"}
    return sorted(found)


def policy_over_loopback(server: LoopbackServer, data: bytes) -> RobotsPolicy:
    server.routes["/robots.txt"] = lambda h: send(h, 200, data, "text/plain")
    with HttpClient(HttpOptions(retries=0, timeout=10)) as client:
        return fetch_robots(client, server.origin)


def assert_same_decisions(robots: Robots, server: LoopbackServer, noisy: bytes) -> None:
    clean = RobotsPolicy.from_text("robots.txt", render(robots, server.origin).decode())
    policy = policy_over_loopback(server, noisy)
    assert policy.rule == "parsed"
    for path in probes(robots):
        url = server.origin + path
        assert policy.allows(url) == clean.allows(url), f"{path}: noise changed the decision"
        event("probe disallowed" if not clean.allows(url) else "probe allowed")


# -- noise changes nothing ---------------------------------------------------------------------


@fuzz(60)
@given(robots_files(), noises)
def test_harmless_noise_never_changes_what_robots_txt_allows(loopback, robots, noise):
    assert_same_decisions(robots, loopback, render(robots, loopback.origin, noise))


@fuzz(20, shrink=False)
@given(robots_files(), noises)
def test_a_leading_bom_never_changes_what_robots_txt_allows(loopback, robots, noise):
    noise = Noise(**{**noise.__dict__, "bom": True})
    assert_same_decisions(robots, loopback, render(robots, loopback.origin, noise))


@fuzz(25)
@given(robots_files(), noises, st.booleans())
def test_the_walker_finds_the_same_sitemaps_through_any_noise(loopback, robots, noise, bom):
    noise = Noise(**{**noise.__dict__, "bom": bom})
    data = render(robots, loopback.origin, noise)
    loopback.routes.clear()
    loopback.routes["/robots.txt"] = lambda h: send(h, 200, data, "text/plain")
    loopback.log.clear()
    walk = Walk(loopback.origin, WalkOptions(http=HttpOptions(retries=0, timeout=10)))
    list(walk)
    asked = [p for p in loopback.paths() if p != "/robots.txt"]
    declared = list(dict.fromkeys(robots.sitemaps)) or ["/sitemap.xml"]
    assert asked == declared


# -- any bytes at all --------------------------------------------------------------------------


@st.composite
def hostile_robots(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["binary", "wildcards", "long-line", "huge", "mangled"]))
    event(f"robots.txt: {kind}")
    if kind == "binary":
        return draw(st.binary(max_size=2_000))
    if kind == "wildcards":
        stars = draw(st.integers(1, 3_000))
        return f"User-agent: *\nDisallow: /{'*a' * stars}$\nAllow: /*{'*' * stars}\n".encode()
    if kind == "long-line":
        size = draw(st.sampled_from([70_000, 600_000]))
        return b"User-agent: *\nDisallow: /" + b"a" * size + b"\nDisallow: /private\n"
    if kind == "huge":  # over the cap: many rules, then more
        return b"User-agent: *\n" + b"Disallow: /x*y*z$\n" * 40_000
    clean = render(draw(robots_files()), "http://127.0.0.1")
    return draw(mutated(clean))


_urls = st.one_of(
    paths,
    st.text(max_size=60).map(lambda t: "/" + t),
    st.just("/" + "a" * 5_000),
    st.just("/%C3%A9/%zz/..//?q=*$#frag"),
)


@fuzz(40)
@given(hostile_robots(), st.lists(_urls, min_size=1, max_size=8))
def test_any_robots_bytes_give_a_policy_that_answers_every_url(loopback, data, asked):
    started = time.monotonic()
    policy = policy_over_loopback(loopback, data)
    assert policy.rule in ("parsed", "allow-all", "disallow-all")
    for path in asked:
        assert policy.allows(loopback.origin + path) in (True, False)
    # Parsing 500 KiB and matching a few URLs takes well under a second; the margin is for
    # a shared, noisy machine: this bounds runaway (quadratic, backtracking) matching only.
    assert time.monotonic() - started < 30


@fuzz(10)
@given(st.integers(0, 200_000), st.sampled_from(["\n", "\r\n"]))
def test_rules_within_the_cap_hold_whatever_follows(loopback, filler, line_end):
    head = f"User-agent: *{line_end}Disallow: /private{line_end}".encode()
    comment = f"# {'x' * 200}{line_end}".encode()
    padding = comment * (filler // len(comment))
    tail = f"Allow: /private{line_end}".encode() * 5
    data = head + padding + b"#" * max(0, ROBOTS_MAX_BYTES - len(head + padding)) + tail
    policy = policy_over_loopback(loopback, data)
    assert not policy.allows(loopback.origin + "/private/page")
