"""Every case of every file in spec/vectors/, run against our codecs through simplex_protocols.conformance.ops."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from simplex_protocols import errors
from simplex_protocols._spec import spec_path
from simplex_protocols.conformance.ops import decode_input, load_all, run_op
from simplex_protocols.rpc import parse_service_response

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


# The vectors hold only what the spec defines; which exception class this library raises for
# each error code is its own business, checked here over every input of the error-class files.

#: This library's class for each of the spec's error codes; any other code is a ServiceError.
LIBRARY_ERROR_CLASSES: dict[str, type[errors.ServiceError]] = {
    "unsupported_protocol": errors.UnsupportedProtocolError,
    "unsupported_version": errors.UnsupportedVersionError,
    "bad_request": errors.BadRequestError,
    "conversation_required": errors.ConversationRequiredError,
    "too_large": errors.TooLargeError,
    "rate_limited": errors.RateLimitedError,
    "internal": errors.InternalServiceError,
}

CLASSIFY_CASES = [
    param
    for param in CASES
    if _load(param.values[0])["operation"] == "rpc.classify_error"  # type: ignore[arg-type]
    and param.values[1]["result"] != "invalid"  # type: ignore[index]
]


@pytest.mark.requirement("RPC-ERR-1", "RPC-ERR-6")
@pytest.mark.parametrize(("path", "case"), CLASSIFY_CASES)
def test_error_class_case_raises_the_library_class(path: Path, case: dict[str, Any]) -> None:
    body = parse_service_response(case["input"]).error
    if body is None:
        return
    exc = body.to_exception()
    assert type(exc) is LIBRARY_ERROR_CLASSES.get(str(body.code), errors.ServiceError)
    assert exc.code == str(body.code)
    assert exc.retryable == (case.get("expected", {}).get("outcome", "final") == "retryable")


# Every verdict traces to a spec sentence: an `invalid` case is a breach of a MUST or MUST NOT
# (where only this library's hardening or an ambiguity's reading decides, the case is
# `acceptable`, with the hardening as its `strict` reading), and no two cases disagree.

LEVELS = {
    entry["id"]: entry["level"]
    for entry in json.loads(spec_path("requirements.json").read_text(encoding="utf-8"))[
        "requirements"
    ]
}


@pytest.mark.parametrize(
    ("path", "case"),
    [p for p in CASES if p.values[1]["result"] == "invalid"],  # type: ignore[index]
)
def test_every_invalid_case_cites_a_must_requirement(path: Path, case: dict[str, Any]) -> None:
    levels = {rid: LEVELS.get(rid) for rid in case["requirements"]}
    assert {"MUST", "MUST NOT"} & set(levels.values()), (
        f"{case['id']}: `invalid` needs a MUST or MUST NOT requirement, it cites {levels}"
    )


def test_a_strict_reading_is_stricter_than_an_acceptable_case() -> None:
    for param in CASES:
        case: dict[str, Any] = param.values[1]  # type: ignore[assignment,index]
        strict = case.get("strict")
        if strict is None:
            continue
        assert case["result"] == "acceptable", case["id"]
        assert (strict["result"] == "invalid") == ("error" in strict), case["id"]


def _input_key(path: Path, case: dict[str, Any]) -> tuple[str, str, str]:
    data = _load(path)
    given = case.get("input", {"input_b64": case.get("input_b64")})
    return (
        data["operation"],
        json.dumps(given, sort_keys=True, ensure_ascii=True),
        json.dumps(case.get("args", {}), sort_keys=True, ensure_ascii=True),
    )


def test_no_two_cases_disagree_on_the_same_input() -> None:
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    clashes = []
    for param in CASES:
        path, case = param.values  # type: ignore[misc]
        key = _input_key(path, case)
        other = seen.setdefault(key, case)
        if other is case:
            continue
        same = (other["result"], other.get("error")) == (case["result"], case.get("error"))
        if same and "expected" in other and "expected" in case:
            same = other["expected"] == case["expected"]
        if not same:
            clashes.append((other["id"], case["id"]))
    assert clashes == []


def test_no_file_repeats_an_input() -> None:
    """Within one file two IDs for one input are a copy, not a second check."""
    repeats = []
    for path in VECTOR_FILES:
        seen: dict[tuple[str, str, str], str] = {}
        for case in _load(path)["tests"]:
            first = seen.setdefault(_input_key(path, case), case["id"])
            if first != case["id"]:
                repeats.append((first, case["id"]))
    assert repeats == []
