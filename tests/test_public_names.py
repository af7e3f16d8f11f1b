"""The public imports stay as they are: ``from auditor import ...``, ``auditor.http`` and
the console script's entry point, whatever rooms the code moves between."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import auditor

#: What ``from auditor import ...`` offers (add a name here when the API grows; never
#: remove or rename one).
PUBLIC = [
    "AuditOptions",
    "AuditorError",
    "Comparison",
    "CrawlSummary",
    "DatedValue",
    "DispersionReport",
    "FetchRecord",
    "Fingerprint",
    "Flag",
    "History",
    "HistoryError",
    "HttpClient",
    "HttpOptions",
    "Inspection",
    "Inventory",
    "NothingReadable",
    "PageEvidence",
    "PlannedFetch",
    "Problem",
    "SiteFailure",
    "SitemapEntry",
    "SitemapFile",
    "UsageError",
    "Walk",
    "WalkOptions",
    "__version__",
    "analyse",
    "audit_fleet",
    "audit_site",
    "compare_lastmod",
    "entries_to_dataframe",
    "inspect_target",
    "load_inventory",
    "mark_shared_date_modified",
    "plan",
    "read_page",
    "record_fetches",
    "simhash_distance",
    "walk",
]

HTTP = [
    "DEFAULT_CONTACT",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_REDIRECTS",
    "DEFAULT_MAX_RETRY_WAIT",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "PAGE_ACCEPT",
    "SITEMAP_ACCEPT",
    "Body",
    "FetchFailure",
    "HttpClient",
    "HttpOptions",
    "MayFollow",
    "Response",
    "conditional_headers",
    "read_local_file",
    "retry_after_seconds",
    "same_origin",
]


def test_the_package_exports_exactly_its_public_names():
    assert sorted(auditor.__all__) == sorted(PUBLIC)


@pytest.mark.parametrize("name", PUBLIC)
def test_each_public_name_imports(name):
    value = getattr(auditor, name)
    assert value is not None
    if inspect.isclass(value) or inspect.isfunction(value):
        assert value.__module__.startswith("auditor.")


def test_the_http_package_keeps_its_names():
    http = importlib.import_module("auditor.http")
    assert sorted(http.__all__) == sorted(HTTP)
    assert all(getattr(http, name) is not None for name in HTTP)
    assert http.HttpClient is importlib.import_module("auditor.http.client").HttpClient


def test_the_console_script_and_python_m_enter_through_cli():
    from auditor.cli import main

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    module, _, function = project["project"]["scripts"]["auditor"].partition(":")
    assert getattr(importlib.import_module(module), function) is main
    shown = subprocess.run(
        [sys.executable, "-m", "auditor", "--version"], capture_output=True, text=True, check=True
    )
    assert auditor.__version__ in shown.stdout


def _function(path: Path, name: str) -> ast.FunctionDef:
    """The definition of ``name`` anywhere in ``path`` (a TYPE_CHECKING block too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name]
    assert len(found) == 1, f"{path} defines {name} {len(found)} times"
    return found[0]


def test_the_walk_stub_for_type_checkers_matches_the_function():
    """``auditor.walk`` loads lazily; its signature, restated for type checkers in
    auditor/__init__.py, is the walker's own."""
    package = Path(auditor.__file__).parent
    stub = _function(package / "__init__.py", "walk")
    real = _function(package / "walker" / "__init__.py", "walk")
    assert ast.dump(stub.args) == ast.dump(real.args)
    assert stub.returns is not None and real.returns is not None
    assert ast.dump(stub.returns) == ast.dump(real.returns)
