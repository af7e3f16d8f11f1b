"""The local cluster's close is bounded: a close that hangs (its IO loop stuck, as once
after a Ctrl-C landed inside a lock) ends with its worker processes killed, saying so,
and the command exits."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

PROJECT = str(Path(__file__).resolve().parents[2])

#: A fleet's owner whose cluster's IO loop blocks for good just before the close.
STUCK = """
import logging, threading
logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
from auditor.fleet.cluster import local_client
with local_client(2, close_timeout=2) as client:
    print(*(w.pid for w in client.cluster.workers.values()), flush=True)
    client.loop.add_callback(threading.Event().wait)  # never set: the loop is stuck
print("closed", flush=True)
"""


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_close_that_hangs_kills_the_workers_and_the_command_exits():
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-c", STUCK],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": PROJECT},
        start_new_session=True,
    )
    try:
        out, err = child.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, 9)
        child.communicate(timeout=30)
        raise
    took = time.monotonic() - started
    print(f"exited after {took:.1f} s; stderr: {err[-1500:]}")
    pids, closed = out.splitlines()
    assert closed == "closed" and child.returncode == 0, err
    assert "the local Dask cluster" in err and "killed its 2 worker processes" in err
    ends = time.monotonic() + 10
    while not all(_gone(int(pid)) for pid in pids.split()) and time.monotonic() < ends:
        time.sleep(0.1)
    assert all(_gone(int(pid)) for pid in pids.split())
    assert took < 60, took
