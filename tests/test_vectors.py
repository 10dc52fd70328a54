"""Every case of every file in spec/vectors/, run against our codecs through simplex_protocols.conformance.ops."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from simplex_protocols._spec import spec_path
from simplex_protocols.conformance.ops import decode_input, load_all, run_op

VECTOR_FILES = sorted(spec_path("vectors").rglob("*.json"))
VECTOR_FILES = [p for p in VECTOR_FILES if p.name != "vectors.schema.json"]


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


CASES = [
    pytest.param(path, case, id=case["id"])
    for path in VECTOR_FILES
    for case in _load(path)["tests"]
]


@pytest.mark.parametrize(
    "path", VECTOR_FILES, ids=lambda p: p.relative_to(spec_path("vectors")).as_posix()
)
def test_vector_file_is_well_formed(path: Path) -> None:
    data = _load(path)
    schema = json.loads(spec_path("vectors", "vectors.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(data)
    assert data["operation"] in load_all(), f"unknown operation {data['operation']}"
    if "format_operation" in data:
        assert data["format_operation"] in load_all()
    notes = data.get("notes", {})
    for case in data["tests"]:
        assert case["id"].startswith(data["family"] + "/"), case["id"]
        for flag in case.get("flags", []):
            assert flag in notes, f"{case['id']}: flag {flag} has no note"
        if case["result"] == "acceptable":
            assert any("acceptable" in notes.get(f, {}) for f in case.get("flags", [])), (
                f"{case['id']}: an acceptable case needs a flag whose note says what is acceptable"
            )
        if case["result"] == "invalid":
            assert "error" in case, f"{case['id']}: an invalid case names its error code"
        assert ("input" in case) != ("input_b64" in case), case["id"]


def test_case_ids_are_unique_and_never_retired() -> None:
    ids = [case.values[1]["id"] for case in CASES]  # type: ignore[index]
    assert len(ids) == len(set(ids)), "duplicate vector case IDs"
    retired = {
        line.strip()
        for line in spec_path("vectors", "RETIRED").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert not retired & set(ids)


@pytest.mark.parametrize(("path", "case"), CASES)
def test_vector_case(path: Path, case: dict[str, Any]) -> None:
    data = _load(path)
    answer = run_op(data["operation"], decode_input(case), case.get("args"))
    if case["result"] == "valid":
        assert answer["ok"], f"expected success, got {answer}"
        if "expected" in case:
            assert answer["value"] == case["expected"]
            fmt = data.get("format_operation")
            if fmt and case.get("canonical", True) and "input" in case:
                back = run_op(fmt, case["expected"], case.get("args"))
                assert back == {"ok": True, "value": case["input"]}
    elif case["result"] == "invalid":
        assert not answer["ok"], f"expected error {case['error']}, got {answer}"
        assert answer["error"]["code"] == case["error"]
