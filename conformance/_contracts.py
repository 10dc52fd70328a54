"""The operation contracts: what each vector operation takes, returns and refuses with.

An implementer writes a driver from these, not from our code. ``conformance/contracts.json``
is the one source (it ships with the suite); ``docs/conformance-contracts.md`` is rendered from
it by :func:`render_markdown` (``python -m simplex_protocols.conformance._contracts`` prints
it), and ``tests/conformance/test_contracts.py`` checks both against every vector and against
this library's answers.

For every operation the file gives a JSON Schema of the request's ``input`` (``input_b64``
says whether some cases send raw bytes instead), of its ``args`` and of the answer's
``value``, and the table of its error codes: ``vectors`` marks the codes an ``invalid`` case
expects; with ``precedence``, the first code listed wins when one input breaks several checks.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Final

__all__ = ["CONTRACTS_SCHEMA", "load_contracts", "render_markdown"]

#: The ``schema`` value of ``contracts.json``.
CONTRACTS_SCHEMA: Final = "simplex-conformance/contracts/1"

_PATH: Final = Path(__file__).with_name("contracts.json")


@cache
def load_contracts() -> dict[str, Any]:
    """The contracts file, as JSON."""
    data: dict[str, Any] = json.loads(_PATH.read_text(encoding="utf-8"))
    if data.get("schema") != CONTRACTS_SCHEMA:
        raise ValueError(f"{_PATH.name}: not a {CONTRACTS_SCHEMA} file")
    return data


def _schema_block(schema: Any) -> list[str]:
    # Not wire JSON: a schema shown in a document.
    text = json.dumps(schema, indent=2, ensure_ascii=False)  # noqa: TID251
    return ["```json", text, "```"]


def render_markdown(contracts: dict[str, Any] | None = None) -> str:
    """``docs/conformance-contracts.md``: every operation's schemas and error table."""
    data = contracts if contracts is not None else load_contracts()
    ops: dict[str, Any] = data["operations"]
    out = [
        "# Vector operation contracts",
        "",
        "<!-- Generated from conformance/contracts.json by "
        "`python -m simplex_protocols.conformance._contracts`; do not edit by hand. -->",
        "",
        "What each operation of the [driver protocol](../conformance/README.md#the-driver-protocol) "
        "takes and answers, for writing a driver in any language. The same file ships with the "
        "suite (`simplex_protocols/conformance/contracts.json` in the installed package).",
        "",
        "## Numbers",
        "",
        data["numbers"],
        "",
        "## Round trips (`+format`)",
        "",
        data["round_trips"],
        "",
        "## Error codes",
        "",
        data["errors"],
        "",
        "## Operations",
        "",
    ]
    for name, op in ops.items():
        out += [f"### {name}", "", op["summary"], ""]
        out.append("Vector files: " + ", ".join(f"`{f}`" for f in op["files"]) + ".")
        out.append("")
        raw = " (some cases send raw bytes as `input_b64` instead)" if op["input_b64"] else ""
        out += [f"`input`{raw}:", "", *_schema_block(op["input"]), ""]
        out += ["`args`:", "", *_schema_block(op["args"]), ""]
        out += ["`value` of a success:", "", *_schema_block(op["output"]), ""]
        if op["errors"]:
            order = (
                "in precedence order (the first that applies wins)"
                if op["precedence"]
                else "no precedence is defined"
            )
            out += [f"Error codes, {order}:", ""]
            out += ["| code | an `invalid` case expects it |", "| --- | --- |"]
            out += [f"| `{e['code']}` | {'yes' if e['vectors'] else ''} |" for e in op["errors"]]
        else:
            out.append("Error codes: none (every input is answered with a value).")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_markdown())
