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
from tests.loopback import FIXTURES, LoopbackServer

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _subcommands() -> list[str]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return sorted(action.choices)
    raise AssertionError("no subcommands")


DOCS = ROOT / "docs"
MKDOCS = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", _subcommands())
def test_every_subcommand_has_its_page_with_a_generated_reference(command):
    page = DOCS / "commands" / f"{command}.md"
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"# `auditor {command}`")
    assert f"<!-- cli-reference: {command} -->" in text  # docs/hooks.py fills it in
    assert f"commands/{command}.md" in MKDOCS  # in the site's navigation


def test_the_readme_is_a_landing_page_that_links_into_the_docs():
    assert len(README.splitlines()) <= 250
    assert "(docs/index.md)" in README and "(docs/verdicts.md)" in README
    for linked in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (ROOT / linked).is_file(), linked


def test_nothing_in_the_docs_points_outside_the_project():
    texts = [README, MKDOCS, *(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))]
    assert not [t for t in texts if "../shared" in t or "DESIGN.md" in t]


def test_ci_builds_the_docs_strictly():
    assert "mkdocs build --strict" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", _subcommands())
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    assert "usage: auditor" in capsys.readouterr().out


@pytest.mark.parametrize("code", sorted(PROBLEM_CODES))
def test_every_problem_code_is_documented(code):
    assert f"| `{code}` |" in (DOCS / "commands" / "walk.md").read_text(encoding="utf-8")


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


#: What `auditor walk` must never load: the data stack and the page and report readers.
HEAVY = ("numpy", "pandas", "lxml", "matplotlib", "extruct", "jinja2")


def test_the_walk_command_loads_no_heavy_library():
    """`auditor walk` starts fast and small: numpy, pandas, lxml, matplotlib stay unloaded."""
    code = f"import sys, auditor.cli; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.strip()
    assert loaded == "[]"


def _imported_by(*args: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The modules ``python -m auditor ARGS`` imports (``-X importtime``), and the run."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "auditor", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    lines = (line for line in run.stderr.splitlines() if line.startswith("import time:"))
    names = {line.rsplit("|", 1)[1].strip() for line in lines}
    return names - {"imported package"}, run


def test_walk_help_loads_no_heavy_library():
    names, run = _imported_by("walk", "--help")
    assert run.returncode == 0, run.stderr
    assert "auditor.cli" in names  # the import log was read
    assert sorted(names.intersection(HEAVY)) == []


def test_a_real_walk_loads_no_heavy_library():
    with LoopbackServer(FIXTURES / "sites" / "basic") as server:
        names, run = _imported_by("walk", server.origin, "--format", "jsonl")
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("\n") > 5  # URLs were walked
    assert "auditor.walker.walk" in names
    assert sorted(names.intersection(HEAVY)) == []


#: What `auditor walk` does not need: the audit, history and fleet command lines.
AUDIT_MACHINERY = ("auditor.cli.audit", "auditor.cli.db", "auditor.cli.fleet", "auditor.history")


def test_walk_help_starts_without_the_audit_machinery():
    names, run = _imported_by("walk", "--help")
    assert run.returncode == 0, run.stderr
    assert sorted(names.intersection(AUDIT_MACHINERY)) == []


def test_walk_help_is_the_same_from_the_walk_alone(capsys):
    """`auditor walk` builds only its own parser: its help and errors are the full parser's."""
    outputs = []
    for argv in (["walk", "--help"], ["walk", "--format", "xml", "x"], ["walk"]):
        for parser in (build_parser(), build_parser("walk")):
            with pytest.raises(SystemExit) as exit_:
                parser.parse_args(argv)
            outputs.append((exit_.value.code, capsys.readouterr()))
    assert outputs[0::2] == outputs[1::2]
    assert "usage: auditor walk" in outputs[0][1].out


def test_the_walk_parser_alone_reads_the_same_options():
    argv = ["walk", "https://example.com", "--format", "csv", "--max-files", "7", "-v"]
    full, alone = build_parser().parse_args(argv), build_parser("walk").parse_args(argv)
    assert vars(alone) == vars(full)


PICTURES = (ROOT / "reports" / "example-report.png", DOCS / "images" / "example-report.png")


def _committed_at(*paths: Path) -> int | None:
    """The newest commit time of ``paths`` in this checkout's git history, or None."""
    try:
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%ct", "--", *map(str, paths)],
            capture_output=True, text=True, check=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return int(shown.stdout) if shown.stdout.strip() else None


def test_the_pictures_are_one_and_no_older_than_the_report_template():
    assert PICTURES[0].read_bytes() == PICTURES[1].read_bytes()  # scripts/screenshots.py
    templates = ROOT / "auditor" / "report" / "templates"
    shown, drawn = _committed_at(PICTURES[0]), _committed_at(templates)
    if shown is None or drawn is None:
        pytest.skip("not a git checkout with history: the pictures' age cannot be read")
    assert shown >= drawn, "the report template changed: run scripts/screenshots.py"


def test_the_readme_library_example_runs(tmp_path, monkeypatch, capsys):
    from auditor.audit import AuditOptions
    from auditor.demo.server import SiteServer
    from auditor.sampler import SampleOptions
    from tests.fleet.servers import simulated

    (example,) = re.findall(r"```python\n(.+?)\n```", README, re.DOTALL)
    monkeypatch.setenv("AUDITOR_DB", str(tmp_path / "history.sqlite3"))
    monkeypatch.chdir(tmp_path)
    server = SiteServer(simulated("accurate-jsonld", 1), host="127.0.31.1")
    try:
        code = example.replace("https://example.com", server.origin)
        code = code.replace(", history)", ", history, _quick)")  # no delay between requests
        assert "_quick" in code
        quick = AuditOptions(sample=SampleOptions(sample=10, delay=0))
        exec(compile(code, "README.md", "exec"), {"_quick": quick})
    finally:
        server.close()
    printed = capsys.readouterr().out.split()
    assert printed[0] in {"trusted", "inconclusive", "untrusted", "partial", "no-lastmod"}


def test_the_library_page_s_examples_run(tmp_path, monkeypatch, capsys):
    """docs/library.md's examples, in order in one namespace, against a simulated site on
    loopback (its origin for example.com; no delay between requests; the proxy example,
    which needs a proxy, left out)."""
    import auditor.audit
    import auditor.fleet.engine
    from auditor.demo.server import SiteServer
    from auditor.sampler import SampleOptions
    from tests.fleet.servers import simulated

    page = (DOCS / "library.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.+?)\n```", page, re.DOTALL)
    assert len(blocks) >= 5
    run = [b for b in blocks if "partner.example" not in b]
    quick = auditor.audit.AuditOptions(sample=SampleOptions(sample=10, delay=0))
    for module in (auditor.audit, auditor.fleet.engine):
        monkeypatch.setattr(module, "AuditOptions", lambda quick=quick: quick)
    monkeypatch.setenv("AUDITOR_DB", str(tmp_path / "history.sqlite3"))
    monkeypatch.chdir(tmp_path)
    server = SiteServer(simulated("accurate-jsonld", 2), host="127.0.31.2")
    (tmp_path / "crawl-list.txt").write_text(f"{server.origin}\n")
    namespace: dict[str, object] = {}
    try:
        for n, block in enumerate(run):
            code = block.replace("https://example.com", server.origin)
            code = code.replace('"example.com"', repr(server.origin)).replace(
                "delay=1.0", "delay=0"
            )
            exec(compile(code, f"docs/library.md, example {n + 1}", "exec"), namespace)
    finally:
        server.close()
    assert namespace["summary"] is not None and namespace["queue"]  # the last example ran
    assert server.origin in capsys.readouterr().out  # the walk and the fleet printed


def test_the_readme_says_where_the_tests_look_for_the_corpus():
    from tests.conftest import CORPUS

    assert ROOT.parent / "shared" / "corpus" == CORPUS
    assert "`shared/corpus` in the clone's parent folder" in " ".join(README.split())
