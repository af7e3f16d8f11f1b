"""MkDocs hooks: the generated parts of the documentation (touches the disk: reads the
package's JSON Schemas).

- ``<!-- cli-reference: NAME -->`` becomes the ``--help`` of ``auditor NAME``, from the
  command's own argparse parser, so the reference cannot drift from the code;
- ``<!-- schema: NAME -->`` becomes the JSON Schema ``auditor/schemas/NAME.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

_CLI = re.compile(r"<!-- cli-reference: (\w+) -->")
_SCHEMA = re.compile(r"<!-- schema: ([\w-]+) -->")
_SCHEMAS = Path(__file__).resolve().parents[1] / "auditor" / "schemas"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The page with its markers replaced by what they stand for."""
    markdown = _CLI.sub(lambda m: _fenced(_help(m.group(1)), "text"), markdown)
    return _SCHEMA.sub(lambda m: _fenced(_schema(m.group(1)), "json"), markdown)


def _help(command: str) -> str:
    from auditor.cli import build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal's width
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return str(action.choices[command].format_help())
    raise ValueError(f"no command auditor {command}")


def _schema(name: str) -> str:
    return json.dumps(json.loads((_SCHEMAS / f"{name}.json").read_text()), indent=2)


def _fenced(text: str, language: str) -> str:
    return f"```{language}\n{text.rstrip()}\n```"
