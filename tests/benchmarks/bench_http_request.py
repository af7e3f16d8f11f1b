"""One request's CPU through the HTTP door: ``HttpClient.get`` to a loopback server.

Run by hand, never by pytest:

    python3 tests/benchmarks/bench_http_request.py --requests 2000             # CPU a request
    python3 tests/benchmarks/bench_http_request.py --requests 2000 --cookie    # and a cookie set
    python3 tests/benchmarks/bench_http_request.py --requests 2000 --profile 40  # and cProfile

A keep-alive HTTP/1.1 server on 127.0.0.1 (a thread of this process, Nagle off) answers
every GET with a 360-byte page (``--cookie``: and a ``Set-Cookie``); one client GETs it
``--requests`` times, each body read to its end and closed, after 50 requests of warm-up.
Prints the CPU of the client's thread a request (``time.thread_time``: the server's thread
is not counted) and the wall time a request.

Touches: the network (loopback).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.http import HttpClient, Response  # noqa: E402

#: Requests made before measuring: the connection made, the code paths warm.
WARM_UP = 50
PAGE = b"<html>hello</html>" * 20  # a small page: the stack's cost, not the body's


def _handler(cookie: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive
        disable_nagle_algorithm = True  # headers and body not held 40 ms apart

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(PAGE)))
            if cookie:
                self.send_header("Set-Cookie", "visit=1; Path=/")
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *_args: object) -> None:
            pass

    return Handler


def _get(client: HttpClient, url: str, count: int) -> None:
    for _ in range(count):
        response = client.get(url)
        assert isinstance(response, Response) and response.status == 200
        for _chunk in response.body:
            pass
        response.close()


def main() -> None:
    """Measure and print the CPU and wall time a request."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--cookie", action="store_true", help="the server sets a cookie")
    parser.add_argument("--profile", type=int, default=0, help="cProfile's top N")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(args.cookie))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/page"
    profile = cProfile.Profile(time.thread_time) if args.profile else None
    with HttpClient() as client:
        _get(client, url, WARM_UP)
        cpu, wall = time.thread_time(), time.perf_counter()
        if profile is not None:
            profile.enable()
        _get(client, url, args.requests)
        if profile is not None:
            profile.disable()
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    server.shutdown()
    server.server_close()
    n = args.requests
    print(f"{n} GETs: CPU {1e3 * cpu / n:.3f} ms a request, wall {1e3 * wall / n:.3f} ms")
    if profile is not None:
        stats = pstats.Stats(profile)
        stats.sort_stats("tottime").print_stats(args.profile)
        stats.sort_stats("cumulative").print_stats(args.profile)


if __name__ == "__main__":
    main()
