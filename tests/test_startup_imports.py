"""Start-up (issue 36): each command imports only what it uses.

Every command's ``--help`` and ``auditor walk`` of a local file load no third-party
library at all (no HTTP stack, numpy, pandas, lxml, matplotlib, Dask, Scrapy,
jsonschema, psycopg, Starlette); ``auditor walk`` of a URL loads the HTTP stack and
nothing heavier. Each run is a fresh ``python -m auditor`` process, as cron and a
shell start it; what it imported is read from its ``sys.modules`` at exit, less what
the interpreter itself loads before ``auditor`` (``site``, ``.pth`` hooks).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from auditor.cli import build_parser
from tests.loopback import FIXTURES, LoopbackServer
from tests.processes import run_recording, small_sitemap

#: Runs ``python -m auditor ARGS`` (argv after the output path) in this process, then
#: writes the names of every module loaded to the output path as JSON.
_RUN = """\
import json, runpy, sys
out, sys.argv = sys.argv[1], ["auditor", *sys.argv[2:]]
try:
    runpy.run_module("auditor", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(sorted(sys.modules), handle)
"""

#: Named in the failure message when one of them is loaded (the libraries issue 36 lists).
HEAVY = (
    "requests", "urllib3", "numpy", "pandas", "pyarrow", "lxml", "matplotlib", "dask",
    "distributed", "scrapy", "jsonschema", "psycopg", "starlette", "uvicorn", "jinja2",
    "extruct",
)  # fmt: skip


def _loaded(tmp: Path, *args: str, code: str = _RUN) -> tuple[set[str], str]:
    """The modules a fresh interpreter has loaded after running ``code`` with ``args``,
    and its standard output."""
    modules, stdout = run_recording(tmp, code, *args)
    return set(modules), stdout


def _third_party(modules: set[str]) -> set[str]:
    """The top-level names in ``modules`` that are neither the standard library nor auditor."""
    tops = {name.split(".", 1)[0] for name in modules}
    return {
        top
        for top in tops
        if top not in sys.stdlib_module_names
        and top != "auditor"
        and not top.startswith("_sysconfigdata")  # the standard library's build settings
    }


def _baseline(tmp: Path, imports: str = "") -> set[str]:
    """The third-party modules a bare interpreter loads (``site``, ``.pth`` hooks), plus
    those ``imports`` loads."""
    code = f"import json, sys\n{imports}\njson.dump(sorted(sys.modules), open(sys.argv[1], 'w'))"
    return _third_party(_loaded(tmp, code=code)[0])


def _extra(tmp: Path, *args: str, allowed: str = "") -> set[str]:
    """What ``auditor ARGS`` loads beyond a bare interpreter (and beyond ``allowed``)."""
    loaded, _ = _loaded(tmp, *args)
    assert "auditor.cli" in loaded  # the command ran
    return _third_party(loaded) - _baseline(tmp, allowed)


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    """Each (sub)command's words, nested ones too (``db copy``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield " ".join((*prefix, name))
                yield from _commands(sub, (*prefix, name))


@pytest.mark.parametrize("command", ["", *_commands(build_parser())])
def test_help_loads_no_third_party_library(tmp_path, command):
    extra = _extra(tmp_path, *command.split(), "--help")
    assert sorted(extra) == [], f"auditor {command} --help loads {sorted(extra)}"


#: What ``auditor --help`` loads of the command line: the list of commands, no command.
TOP_HELP = {"auditor.cli", "auditor.cli.args", "auditor.cli.commands"}


def test_the_top_level_help_loads_no_command(tmp_path):
    loaded, stdout = _loaded(tmp_path, "--help")
    assert "usage: auditor" in stdout
    assert {m for m in loaded if m.startswith("auditor.cli")} == TOP_HELP
    assert not any(m.startswith(("auditor.walker", "auditor.http")) for m in loaded)


def _sub(parser: argparse.ArgumentParser, *words: str) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``words`` of ``parser``."""
    for word in words:
        parser = next(
            a.choices[word] for a in parser._actions if isinstance(a, argparse._SubParsersAction)
        )
    return parser


def _options(parser: argparse.ArgumentParser) -> list[tuple[object, ...]]:
    """What ``parser`` reads: each option and argument, its destination, default and kind."""
    return [
        (a.option_strings, a.dest, a.default, a.required, a.nargs, a.const, _named(a.type), type(a))
        for a in parser._actions
    ]


def _named(kind: object) -> object:
    """An argument's type by name (a closure is made anew with each parser)."""
    return getattr(kind, "__qualname__", kind)


def test_the_list_of_commands_is_the_full_parsers():
    """``auditor --help`` (no command named) is built from the list of commands alone."""
    assert build_parser("").format_help() == build_parser().format_help()


@pytest.mark.parametrize("command", list(_commands(build_parser())))
def test_a_command_alone_is_the_same_as_in_the_full_parser(command):
    """``auditor NAME ...`` builds NAME's group alone: the same help, options, defaults."""
    words = command.split()
    alone, full = _sub(build_parser(words[0]), *words), _sub(build_parser(), *words)
    assert alone.format_help() == full.format_help()
    assert _options(alone) == _options(full)


@pytest.mark.parametrize("output", ["jsonl", "csv"])
def test_walking_a_local_file_loads_no_third_party_library(tmp_path, output):
    sitemap = small_sitemap(tmp_path, 20)
    loaded, stdout = _loaded(tmp_path, "walk", str(sitemap), "--format", output)
    assert "auditor.walker.walk" in loaded  # the walk ran
    assert len(stdout.splitlines()) == 20 + (output == "csv")  # and read every URL
    extra = _third_party(loaded) - _baseline(tmp_path)
    assert sorted(extra) == [], f"auditor walk FILE loads {sorted(extra)}"


def test_walking_a_site_loads_the_http_stack_and_nothing_heavier(tmp_path):
    with LoopbackServer(FIXTURES / "sites" / "basic") as server:
        loaded, stdout = _loaded(tmp_path, "walk", server.origin)
    assert stdout.count("\n") > 5  # URLs were walked
    assert "requests" in loaded
    extra = _third_party(loaded) - _baseline(tmp_path, "import requests")
    assert sorted(extra) == [], f"auditor walk URL loads {sorted(extra)} beyond requests"
    assert sorted(_third_party(loaded).intersection(HEAVY)) == ["requests", "urllib3"]


#: What a walk of a local XML urlset to JSONL does not use, so does not import: RFC 822
#: dates (an RSS feed's pubDate, HTTP date headers: the ``email`` package, which loads
#: ``socket`` too) and the CSV writer (``--format csv``).
NOT_FOR_A_PLAIN_WALK = ("email", "email.utils", "socket", "csv")


def test_walking_a_plain_local_urlset_loads_no_rfc822_dates_nor_csv(tmp_path):
    sitemap = small_sitemap(tmp_path, 20)
    loaded, stdout = _loaded(tmp_path, "walk", str(sitemap), "--format", "jsonl")
    assert len(stdout.splitlines()) == 20  # the walk read every URL
    assert "auditor.walker.dates" in loaded
    before = set(_loaded(tmp_path, code=_BARE)[0])
    extra = sorted(m for m in NOT_FOR_A_PLAIN_WALK if m in loaded and m not in before)
    assert extra == [], f"auditor walk FILE loads {extra}"


_BARE = "import json, sys\njson.dump(sorted(sys.modules), open(sys.argv[1], 'w'))"


#: What a walk of a sitemap URL (not a site: no robots.txt) that the server answers with
#: the sitemap itself does not use, so does not import: the robots.txt file, the pages a
#: bot wall or an error answers with, and a previous walk's files to re-verify.
NOT_FOR_A_SITEMAP_URL = ("auditor.walker.robotsfile", "auditor.http.walls", "auditor.walker.reuse")


def test_walking_a_sitemap_url_loads_no_robots_walls_nor_reuse(tmp_path):
    with LoopbackServer(FIXTURES / "sites" / "basic") as server:
        loaded, stdout = _loaded(tmp_path, "walk", server.url("/sitemap_index.xml"))
    assert stdout.count("\n") >= 5  # URLs were walked
    extra = sorted(m for m in NOT_FOR_A_SITEMAP_URL if m in loaded)
    assert extra == [], f"auditor walk SITEMAP-URL loads {extra}"
