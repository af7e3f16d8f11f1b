"""The command line's own process ends without a last garbage collection of its heap
(issue 36): ``main()`` run as the process's entry point (no ``argv`` given: the console
script, ``python -m auditor``) freezes what is left before the interpreter exits, so
the shutdown's collection does not walk every object of the imports and the walk (about
40 ms of a 0.5 s walk of a 50 MB file). Called with ``argv`` (tests, other code in the
same process), it freezes nothing: that process goes on and collects as usual.
"""

from __future__ import annotations

import gc
from pathlib import Path

from auditor.cli import main
from tests.processes import run_recording, small_sitemap

#: Runs ``python -m auditor ARGS`` (argv after the output path) in this process, then
#: writes how many objects the garbage collector holds frozen, as JSON.
_RUN = """\
import gc, json, runpy, sys
out, sys.argv = sys.argv[1], ["auditor", *sys.argv[2:]]
before = gc.get_freeze_count()
try:
    runpy.run_module("auditor", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
with open(out, "w", encoding="utf-8") as handle:
    json.dump({"before": before, "after": gc.get_freeze_count(), "code": code}, handle)
"""


def _run_process(tmp: Path, *args: str) -> tuple[dict[str, int], str]:
    frozen, stdout = run_recording(tmp, _RUN, *args)
    return frozen, stdout


def test_the_process_entry_point_freezes_its_heap_before_exiting(tmp_path):
    frozen, stdout = _run_process(tmp_path, "walk", str(small_sitemap(tmp_path, 30)))
    assert frozen["code"] == 0
    assert len(stdout.splitlines()) == 30  # the walk wrote every URL first
    assert frozen["before"] == 0
    assert frozen["after"] > 10_000  # the imports' objects, at least


def test_a_command_that_stops_early_freezes_too(tmp_path):
    frozen, _ = _run_process(tmp_path, "walk", str(tmp_path / "absent.xml"))
    assert frozen["code"] == 2  # a usage error: no such file
    assert frozen["after"] > 10_000


def test_main_called_with_argv_freezes_nothing(tmp_path, capsys):
    before = gc.get_freeze_count()
    assert main(["walk", str(small_sitemap(tmp_path, 30)), "--format", "jsonl"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 30
    assert gc.get_freeze_count() == before
