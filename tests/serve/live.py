"""Servers for the serve tests, on a free loopback port: an ASGI application run by
uvicorn in a thread of the test (:func:`serving`), or ``auditor serve`` itself in a
process (:func:`serve_process`), each waited for and stopped with bounded waits."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

PROJECT = str(Path(__file__).resolve().parents[2])
#: How long a server may take to start (a 100-site history's table is built first).
START_SECONDS = 60


@contextmanager
def serving(app: Any, **config: Any) -> Iterator[str]:
    """``app`` served on 127.0.0.1 by uvicorn in a thread (``config``: more of uvicorn's
    settings, e.g. ``root_path``); yields its base URL."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listening.bind(("127.0.0.1", 0))
    listening.listen(128)
    port = listening.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, lifespan="on", **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_SECONDS
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        listening.close()


@contextmanager
def serve_process(
    *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``auditor serve --port 0 ARGS`` in a process; yields its base URL and the process,
    then stops it (SIGINT, as Ctrl-C) and waits for it."""
    child = subprocess.Popen(
        [sys.executable, "-m", "auditor", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": PROJECT, **(env or {})},
    )
    try:
        assert child.stderr is not None
        line = child.stderr.readline()  # the first line names the address
        found = re.search(r"at (http://[^\s;]+?)/?[;\s]", line + " ")
        if found is None:
            rest = child.communicate(timeout=START_SECONDS)[1]
            raise AssertionError(f"auditor serve did not start: {line}{rest}")
        yield found.group(1).rstrip("/"), child
    finally:
        if child.poll() is None:
            child.send_signal(2)
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(timeout=10)
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
