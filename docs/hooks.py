"""MkDocs hooks: the generated parts of the documentation (touches the disk: reads the
package's JSON Schemas).

- ``<!-- cli-reference: NAME -->`` becomes the ``--help`` of ``auditor NAME``, from the
  command's own argparse parser, so the reference cannot drift from the code;
- ``<!-- schema: NAME -->`` becomes the JSON Schema ``auditor/schemas/NAME.json``;
- ``<!-- openapi -->`` becomes the reference of ``auditor serve``'s API, from the OpenAPI
  document the server itself serves (:mod:`auditor.serve.openapi`).
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
_OPENAPI = "<!-- openapi -->"
_SCHEMAS = Path(__file__).resolve().parents[1] / "auditor" / "schemas"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The page with its markers replaced by what they stand for."""
    markdown = _CLI.sub(lambda m: _fenced(_help(m.group(1)), "text"), markdown)
    if _OPENAPI in markdown:
        markdown = markdown.replace(_OPENAPI, _openapi())
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


def _openapi() -> str:
    """Each operation of the API: its summary, parameters, body and answers."""
    from auditor.serve.openapi import openapi_document

    document = openapi_document()
    parts: list[str] = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            parts.append(f"### `{method.upper()} {path}`\n\n{operation['summary']}\n")
            parts.extend(_parameters(operation.get("parameters", [])))
            body = operation.get("requestBody")
            if body is not None:
                kind, content = next(iter(body["content"].items()))
                shown = json.dumps(content["schema"], indent=2)
                parts.append(f"Body (`{kind}`):\n\n```json\n{shown}\n```\n")
            answers = [f"`{code}` {answer['description']}" for code, answer in
                       operation["responses"].items()]  # fmt: skip
            parts.append("Answers: " + "; ".join(answers) + ".\n")
    parts.append("### Schemas\n")
    for name, schema in document["components"]["schemas"].items():
        parts.append(f"#### {name}\n\n```json\n{json.dumps(schema, indent=2)}\n```\n")
    return "\n".join(parts)


def _parameters(parameters: list[dict[str, Any]]) -> list[str]:
    if not parameters:
        return []
    rows = ["| parameter | in | what |", "|---|---|---|"]
    for parameter in parameters:
        described = parameter.get("description", "").replace("|", "\\|")
        rows.append(f"| `{parameter['name']}` | {parameter['in']} | {described} |")
    return ["\n".join(rows) + "\n"]
