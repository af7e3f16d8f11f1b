"""The exact bytes of the ``walk`` command's output on the fixtures, pinned.

``walk_output_expected.txt`` (beside this file) holds, for each fixture site walked over
loopback and each local fixture file, the JSONL that ``write_walk_jsonl`` writes, the CSV
that ``write_csv`` writes and the problems the walk reports; the loopback origin reads
``{{origin}}`` and the checkout's root ``{{root}}``. Any change of output bytes fails here.
After a deliberate change of output, rewrite the file with ``AUDITOR_REPIN=1`` and read the
diff by eye.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from auditor.http import HttpOptions
from auditor.walker import Walk, WalkOptions
from auditor.walker.output import write_csv, write_walk_jsonl
from tests.loopback import FIXTURES, LoopbackServer

ROOT = FIXTURES.parent
EXPECTED = Path(__file__).with_name("walk_output_expected.txt")
#: Index children of a local file are http URLs the network guard refuses: fail fast.
OPTIONS = WalkOptions(http=HttpOptions(timeout=5.0, retries=0, backoff=0.0))


def _stamped_when_served(site: Path) -> bool:
    """Files stamped at serving time ({{now}}) give other bytes at each run: not pinned."""
    return any(b"{{now" in p.read_bytes() or b"{{today" in p.read_bytes() for p in _files(site))


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


SITES = [p for p in sorted((FIXTURES / "sites").iterdir()) if not _stamped_when_served(p)]
LOCAL = [
    p for folder in ("formats", "hostile", "dispersion", "demo") for p in _files(FIXTURES / folder)
]


def _walked(target: str) -> str:
    """The JSONL, the CSV and the problems of two walks of ``target``, as one text."""
    jsonl, csv = io.StringIO(), io.StringIO()
    walk = Walk(target, OPTIONS)
    count = write_walk_jsonl(walk, jsonl)
    write_csv(Walk(target, OPTIONS), csv)
    problems = "".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in walk.problems)
    return f"-- jsonl ({count})\n{jsonl.getvalue()}-- csv\n{csv.getvalue()}-- problems\n{problems}"


def _section(name: str) -> str:
    """The walk outputs of one target, named as in the file (``site NAME`` or ``file PATH``)."""
    kind, _, what = name.partition(" ")
    if kind == "site":
        with LoopbackServer(FIXTURES / "sites" / what) as server:
            return _walked(server.origin).replace(server.origin, "{{origin}}")
    return _walked(str(ROOT / what)).replace(str(ROOT), "{{root}}")


NAMES = [f"site {p.name}" for p in SITES] + [f"file {p.relative_to(ROOT)}" for p in LOCAL]


def _expected_text() -> str:
    """The pinned file as written (no newline translation: a CR in a section stays one)."""
    if not EXPECTED.exists():
        return ""
    with EXPECTED.open(encoding="utf-8", newline="") as handle:
        return handle.read()


def _read(text: str) -> dict[str, str]:
    """The file's sections by name: each ``== NAME`` line starts one."""
    parts = re.split(r"^== (.+)\n", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.fixture(scope="module")
def expected() -> Iterator[dict[str, str]]:
    """The pinned sections; with AUDITOR_REPIN set, rewritten from what the tests saw."""
    sections = _read(_expected_text())
    repin: dict[str, str] = {}
    yield repin if os.environ.get("AUDITOR_REPIN") else sections
    if repin:
        EXPECTED.write_text("".join(f"== {n}\n{repin[n]}" for n in NAMES if n in repin), "utf-8")


def test_every_pinned_target_is_a_fixture():
    sections = _read(_expected_text())
    assert list(sections) == NAMES
    assert len(SITES) > 20 and len(LOCAL) > 40  # the fixture folders were found


@pytest.mark.parametrize("name", NAMES)
def test_the_walk_output_is_byte_for_byte_the_pinned_one(name, expected):
    now = _section(name)
    if os.environ.get("AUDITOR_REPIN"):
        expected[name] = now
    assert now == expected.get(name)
