"""Fuzzing the door's new readers of untrusted text: host names and URLs
(auditor/http/hosts.py), added headers (auditor/http/extra_headers.py) and proxy URLs
(auditor/http/proxy.py). Pure functions: many cheap cases.

Properties:

- nothing but the documented error escapes: canonical_host raises ValueError only,
  url_key and origin never raise;
- the normal forms are fixed points (normalising twice is normalising once) and ASCII;
  spellings built from one host (case, the root's dot, a default port, an escaped
  unreserved character) share one origin and one key;
- an accepted header can put no line break or control character on the wire, a refused
  one's message never quotes its value; a proxy's password never shows once masked.
"""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from auditor.http.extra_headers import HeaderError, check_header, parse_header
from auditor.http.hosts import canonical_host, origin, url_key
from auditor.http.proxy import ProxyError, check_proxy, masked
from tests.fuzz.budget import fuzz

_URL_CHARS = string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=%é€\u3002 \t\r\n\x00"
_LABEL = st.text(alphabet=string.ascii_lowercase + string.digits + "éüß", min_size=1, max_size=12)
_HOSTS = st.lists(_LABEL, min_size=1, max_size=4).map(".".join)
_PATHS = st.text(alphabet=string.ascii_letters + string.digits + "-._~/%", max_size=30)


@fuzz(100)
@given(st.text(alphabet=_URL_CHARS, max_size=80))
def test_url_key_and_origin_never_raise_and_are_fixed_points(text):
    key = url_key(text)
    assert url_key(key) == key
    found = origin(text)
    if found is not None:
        assert found.isascii() and origin(found) == found
        assert url_key(found) == found


@fuzz(100)
@given(st.text(max_size=40))
def test_canonical_host_raises_value_error_only_and_is_idempotent(text):
    try:
        host = canonical_host(text)
    except ValueError:
        return
    assert host.isascii() or "%" in host  # an IPv6 zone is kept as written
    assert canonical_host(host) == host


@fuzz(50)
@given(_HOSTS, st.sampled_from(["http", "https"]), _PATHS, st.booleans(), st.booleans())
def test_spellings_of_one_url_share_one_origin_and_key(host, scheme, path, dot, port):
    try:
        canonical_host(host)
    except ValueError:
        return  # not a name IDNA takes
    base = f"{scheme}://{host}/{path}"
    default = {"http": 80, "https": 443}[scheme]
    cased = "".join(c.upper() if c.isascii() else c for c in host)  # "ß".upper() is "SS"
    spelt = f"{scheme.upper()}://{cased}{'.' if dot else ''}{f':{default}' if port else ''}/"
    spelt += path.replace("~", "%7e").replace("-", "%2D")
    assert origin(spelt) == origin(base)
    assert url_key(spelt) == url_key(base)


@fuzz(100)
@given(st.text(max_size=30), st.text(max_size=60))
def test_an_accepted_header_is_safe_on_the_wire_and_a_refused_one_says_no_value(name, value):
    secret = f"S3CRET{value}"
    try:
        sent = check_header(name, secret)
    except HeaderError as exc:
        assert secret not in str(exc)
        return
    assert sent == (name, secret)
    assert all(0x20 <= ord(c) < 0x7F or c == "\t" for c in secret)
    assert name.lower() != "user-agent"


@fuzz(50)
@given(st.text(max_size=60))
def test_parse_header_raises_header_error_only(text):
    try:
        name, value = parse_header(text)
    except HeaderError:
        return
    assert "\r" not in value and "\n" not in value and name


@fuzz(50)
@given(st.sampled_from(["http", "https", "socks5h", "ftp", ""]), st.text(max_size=20), _HOSTS)
def test_a_proxy_password_never_shows_once_masked(scheme, password, host):
    url = f"{scheme}://user:PW{password}X@{host}:3128"
    try:
        check_proxy(url)
    except ProxyError as exc:
        assert f"PW{password}X" not in str(exc)
    assert f"PW{password}X" not in masked(url)
