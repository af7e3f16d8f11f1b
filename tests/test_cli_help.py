"""Every command's ``--help`` says what each of its options does, one concept has one
name across commands (an old spelling still works, with a note on stderr), and each
command's synopsis in docs/commands/ names exactly the options its parser takes."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from auditor.cli import build_parser

COMMANDS = Path(__file__).resolve().parent.parent / "docs" / "commands"


def _commands(
    parser: argparse.ArgumentParser, prefix: str = ""
) -> Iterator[tuple[str, argparse.ArgumentParser, str | None]]:
    """Each (sub)command's name (``db copy``), parser and one-line help, nested ones too."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{prefix}{name}", sub, helps.get(name)
                yield from _commands(sub, f"{prefix}{name} ")


ALL = {name: (sub, line) for name, sub, line in _commands(build_parser())}


def _shown(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options and arguments ``--help`` lists (a deprecated alias is hidden)."""
    return [
        a
        for a in parser._actions
        if not isinstance(a, argparse._HelpAction) and a.help != argparse.SUPPRESS
    ]


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_command_has_a_line_and_a_description(name):
    parser, line = ALL[name]
    assert line, f"auditor {name} has no line in `auditor --help`"
    assert parser.description, f"auditor {name} --help has no description"


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_option_and_argument_has_help(name):
    parser, _ = ALL[name]
    bare = [a.option_strings or [a.dest] for a in _shown(parser) if not (a.help or "").strip()]
    assert bare == [], f"auditor {name}: no help for {bare}"


def _requests(name: str, parser: argparse.ArgumentParser) -> bool:
    """The commands that make HTTP requests: those taking the HTTP options (--timeout),
    and the demo (to its own sites on 127.0.0.1)."""
    return name == "demo" or any("--timeout" in a.option_strings for a in parser._actions)


@pytest.mark.parametrize("name", sorted(ALL))
def test_verbose_speaks_of_requests_only_where_the_command_makes_them(name):
    parser, _ = ALL[name]
    (verbose,) = [a for a in parser._actions if "--verbose" in a.option_strings]
    assert ("request" in (verbose.help or "")) == _requests(name, parser), verbose.help


def _synopsis(command: str) -> str:
    """The first fenced block of the command's page: its synopsis."""
    page = (COMMANDS / f"{command}.md").read_text(encoding="utf-8")
    found = re.search(r"```\n(.*?)```", page, re.DOTALL)
    assert found, f"docs/commands/{command}.md has no synopsis"
    return found.group(1)


TOP = sorted(name for name in ALL if " " not in name)


@pytest.mark.parametrize("command", TOP)
def test_the_synopsis_names_exactly_the_parsers_options(command):
    synopsis = _synopsis(command)
    parsers = [sub for name, (sub, _) in ALL.items() if name.split()[0] == command]
    actions = [a for p in parsers for a in _shown(p) if a.option_strings]
    written = set(re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", synopsis))
    missing = sorted(
        {tuple(a.option_strings) for a in actions if not written & set(a.option_strings)}
    )
    known = {s for a in actions for s in a.option_strings}
    assert missing == [], f"docs/commands/{command}.md's synopsis lacks {missing}"
    assert written <= known, f"not options of auditor {command}: {sorted(written - known)}"
    for action in actions:
        if action.choices:
            for option in action.option_strings:
                for said in re.findall(rf"{option} ([\w|]+)", synopsis):
                    assert said.split("|") == list(action.choices), (option, said)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    from auditor.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_export_writes_json_lines_under_the_name_every_command_uses(tmp_path, capsys):
    database = tmp_path / "h.sqlite3"
    code, _, err = _run(capsys, "export", "--format", "jsonl", "--db", str(database),
                          "--out", str(tmp_path / "new"))  # fmt: skip
    assert code == 0 and "deprecated" not in err
    assert (tmp_path / "new" / "runs.jsonl").is_file()
    code, _, err = _run(capsys, "export", "--format", "json", "--db", str(database),
                          "--out", str(tmp_path / "old"))  # fmt: skip
    assert code == 0 and (tmp_path / "old" / "runs.jsonl").is_file()  # still works
    assert "--format json is deprecated: say --format jsonl" in err


def test_coverage_reads_a_crawl_log_from_the_option_crawled_names_it(tmp_path, capsys):
    """``--from FILE``, as ``auditor crawled`` names a crawl log; ``--crawled``, its former
    name, still works (the same outcome) with a note."""
    log = tmp_path / "crawl.jsonl"
    log.write_text("", encoding="utf-8")
    args = ["coverage", "https://example.com", "--db", str(tmp_path / "h.sqlite3")]
    new = _run(capsys, *args, "--from", str(log))
    old = _run(capsys, *args, "--crawled", str(log))
    assert "deprecated" not in new[2]
    note = "auditor: --crawled is deprecated: say --from (the old spelling still works)\n"
    assert old[2] == note + new[2]
    assert (old[0], old[1]) == (new[0], new[1])
    assert "--crawled" not in ALL["coverage"][0].format_help()  # the old name is not taught
