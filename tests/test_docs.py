"""The README and the public API stay honest: tests keep them in step with the code."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

import auditor
from auditor.cli import build_parser, main
from auditor.models import PROBLEM_CODES

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _subcommands() -> list[str]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return sorted(action.choices)
    raise AssertionError("no subcommands")


@pytest.mark.parametrize("command", _subcommands())
def test_every_subcommand_is_documented(command):
    assert f"### `auditor {command}`" in README


@pytest.mark.parametrize("command", _subcommands())
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    assert "usage: auditor" in capsys.readouterr().out


@pytest.mark.parametrize("code", sorted(PROBLEM_CODES))
def test_every_problem_code_is_documented(code):
    assert f"| `{code}` |" in README


def test_ci_runs_the_readme_test_command():
    commands = re.findall(r"```sh\n(.+?)\n```", README)
    assert len(commands) >= 2, "the README keeps its two set-up commands"
    test_command = commands[1]
    assert "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _ci_checks() -> list[str]:
    """The commands the README's Development section says CI runs beside the tests."""
    line = re.search(r"^- Lint and types: `([^`]+)`", README, re.MULTILINE)
    assert line, "the README's Development section names its lint and type checks"
    return line.group(1).split(" && ")


@pytest.mark.parametrize("check", _ci_checks())
def test_ci_runs_the_readme_checks(check):
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert check in [line.strip() for line in lines]


def test_all_lists_exactly_the_public_names():
    for name in auditor.__all__:  # lazy names load on first use: load them all
        getattr(auditor, name)
    public = {
        name
        for name, value in vars(auditor).items()
        if not name.startswith("_") and not isinstance(value, type(auditor))
    }
    assert set(auditor.__all__) - {"__version__"} == public


def test_the_walk_command_loads_no_heavy_library():
    """`auditor walk` starts fast and small: pandas, lxml and matplotlib stay unloaded."""
    code = (
        "import sys, auditor.cli; "
        "print(sorted(m for m in ('pandas', 'lxml', 'matplotlib', 'extruct', 'jinja2') "
        "if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout.strip()
    assert loaded == "[]"
