"""The floor of bench_walk.py: the stdlib's C ElementTree ``iterparse`` streaming a
sitemap index and its children over HTTP, picking ``loc`` and ``lastmod`` by tag. A
module of its own, so that its process imports only what the loop uses.

Touches: the network.
"""

from __future__ import annotations

import gzip
import json
import time

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def floor(index_url: str) -> None:
    """Stream the index, then every child, through C iterparse; print a JSON result."""
    started = time.perf_counter()
    from xml.etree.ElementTree import iterparse

    import requests

    loc_tag, lastmod_tag = f"{{{SITEMAP_NS}}}loc", f"{{{SITEMAP_NS}}}lastmod"
    url_tag, sitemap_tag = f"{{{SITEMAP_NS}}}url", f"{{{SITEMAP_NS}}}sitemap"
    session = requests.Session()

    def stream(url: str):  # type: ignore[no-untyped-def]
        resp = session.get(url, stream=True, timeout=60)
        resp.raise_for_status()
        return resp, (gzip.GzipFile(fileobj=resp.raw) if url.endswith(".gz") else resp.raw)

    resp, source = stream(index_url)
    children = []
    events = iterparse(source, events=("start", "end"))
    _, root = next(events)
    loc = None
    for event, elem in events:
        if event == "end":
            if elem.tag == loc_tag:
                loc = elem.text
            elif elem.tag == sitemap_tag:
                children.append(loc)
                root.clear()
    resp.close()

    urls = dated = 0
    begun = time.perf_counter()
    for child in children:
        resp, source = stream(child)
        events = iterparse(source, events=("start", "end"))
        _, root = next(events)
        loc = lastmod = None
        for event, elem in events:
            if event == "end":
                tag = elem.tag
                if tag == loc_tag:
                    loc = elem.text
                elif tag == lastmod_tag:
                    lastmod = elem.text
                elif tag == url_tag:
                    urls += loc is not None
                    dated += lastmod is not None
                    loc = lastmod = None
                    root.clear()
        resp.close()
    ended = time.perf_counter()
    result = {
        "urls": urls,
        "dated": dated,
        "files": len(children) + 1,
        "parse_s": ended - begun,
        "in_process_s": ended - started,
    }
    print(json.dumps(result), flush=True)
