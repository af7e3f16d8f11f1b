"""A fleet's processes settle their garbage collector: the local workers as Dask starts
them (their preload), the command for the time of its fleet, given back after.

Touches: processes (a child interpreter), the network (loopback).
"""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.fleet.heap import FLEET_THRESHOLDS, collector_for_fleet
from tests.fleet.servers import simulated

PROJECT = str(Path(__file__).resolve().parents[2])

#: A worker's preload hook, in a process of its own (it settles the process for good).
PRELOADED = """
import gc, sys
from auditor.fleet.heap import dask_setup
before = gc.get_freeze_count(), "auditor.audit" in sys.modules
dask_setup(object())
print(*before, "auditor.audit" in sys.modules, gc.get_freeze_count() > 0, gc.get_threshold())
"""


def test_a_workers_preload_imports_the_audit_freezes_it_and_sets_the_fleet_thresholds():
    out = subprocess.run(
        [sys.executable, "-c", PRELOADED], cwd=PROJECT, capture_output=True, text=True, check=True
    ).stdout.split(maxsplit=4)
    assert out[:4] == ["0", "False", "True", "True"]
    assert out[4].strip() == str(FLEET_THRESHOLDS)


def test_the_commands_fleet_settles_the_collector_and_gives_it_back_after():
    thresholds = gc.get_threshold()
    assert thresholds != FLEET_THRESHOLDS and gc.get_freeze_count() == 0
    with collector_for_fleet():
        assert gc.get_threshold() == FLEET_THRESHOLDS
        assert gc.get_freeze_count() > 0
        kept = [object()]  # made inside: not frozen
        assert gc.get_freeze_count() > 0 and kept
    assert gc.get_threshold() == thresholds
    assert gc.get_freeze_count() == 0


def test_objects_frozen_before_stay_frozen_and_nothing_more_is():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_for_fleet():
            [object() for _ in range(10)]
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_an_error_inside_still_gives_the_collector_back():
    thresholds = gc.get_threshold()
    try:
        with collector_for_fleet():
            raise RuntimeError("the fleet failed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == thresholds and gc.get_freeze_count() == 0


#: This process's collector thresholds as each request of the sites below came.
SEEN: list[tuple[int, int, int]] = []


class _Watching(SiteServer):
    """A site that notes this process's collector thresholds as each request comes (the
    command runs in this process: the server sees them as the command set them)."""

    def respond(self, path: str) -> tuple[int, str, str]:
        SEEN.append(gc.get_threshold())
        return super().respond(path)


def test_the_audit_command_runs_its_fleet_with_the_fleet_thresholds(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    servers = [_Watching(simulated("accurate-jsonld", n), host=f"127.0.41.{n}") for n in (1, 2)]
    thresholds = gc.get_threshold()
    try:
        code = main(
            ["audit", *(s.origin for s in servers), "--db", str(tmp_path / "h.sqlite3"),
             "--delay", "0", "--sample", "3", "--concurrency", "2", "--reports", "none"]
        )  # fmt: skip
    finally:
        for server in servers:
            server.close()
    assert code == 0
    assert SEEN and set(SEEN) == {FLEET_THRESHOLDS}
    assert gc.get_threshold() == thresholds and gc.get_freeze_count() == 0
