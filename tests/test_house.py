"""House rules of the package: every module says what it is for and what it may touch.

Issue 22: each module's docstring ends with one line ``Touches: <what>.``, where
<what> is ``nothing`` or a comma-separated list of ``the network``, ``the database`` and
``the disk``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "auditor"
_ROOM = "(the network|the database|the disk)"
TOUCHES = re.compile(rf"^Touches: (nothing|({_ROOM}(, {_ROOM})*))\.$")


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _fault(path: Path) -> str | None:
    """What is wrong with ``path``'s module docstring, or None."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    if not docstring:
        return "no module docstring"
    lines = [line.strip() for line in docstring.splitlines() if line.strip()]
    if not TOUCHES.match(lines[-1]):
        return f"last line is not 'Touches: ...': {lines[-1]!r}"
    return None


def test_the_package_has_modules():
    assert len(_modules()) > 10


def test_every_module_docstring_ends_with_what_it_touches():
    faults = {path: _fault(path) for path in _modules()}
    offending = [
        f"{path.relative_to(PACKAGE.parent)}: {fault}"
        for path, fault in faults.items()
        if fault is not None
    ]
    assert not offending, "modules without a final 'Touches: ...' line:\n" + "\n".join(offending)


def test_touches_lines_are_well_formed():
    assert TOUCHES.match("Touches: nothing.")
    assert TOUCHES.match("Touches: the network, the database, the disk.")
    assert not TOUCHES.match("Touches: nothing, the disk.")
    assert not TOUCHES.match("Touches: the network")
    assert not TOUCHES.match("Touches: the cloud.")
