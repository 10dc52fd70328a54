"""The published operation contracts (conformance/contracts.json, rendered as
docs/conformance-contracts.md) hold for every vector case and for this library's answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from simplex_protocols.conformance._contracts import load_contracts, render_markdown
from simplex_protocols.conformance._vectors import VectorCase, load_vectors
from simplex_protocols.conformance.ops import decode_input, run_op

ROOT = Path(__file__).resolve().parents[2]
VECTORS = load_vectors()
OPS: dict[str, Any] = load_contracts()["operations"]


def _validator(schema: Any) -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _requests(case: VectorCase) -> Iterator[tuple[str, Any, dict[str, Any]]]:
    """Every request the suite sends for a case: the operation and, with a round trip, its
    format operation (input: the expected value)."""
    args = dict(case.raw.get("args", {}))
    if "input_b64" not in case.raw:
        yield case.operation, case.raw.get("input"), args
    if case.has_round_trip and case.format_operation is not None:
        yield case.format_operation, case.raw["expected"], args


def test_the_document_is_rendered_from_the_contracts() -> None:
    text = (ROOT / "docs" / "conformance-contracts.md").read_text(encoding="utf-8")
    assert text == render_markdown(), (
        "regenerate: python -m simplex_protocols.conformance._contracts "
        "> docs/conformance-contracts.md"
    )


def test_every_operation_has_a_contract_and_every_contract_an_operation() -> None:
    assert set(OPS) == set(VECTORS.operations())


def test_every_schema_is_a_json_schema() -> None:
    for op in OPS.values():
        for part in ("input", "args", "output"):
            _validator(op[part])


@pytest.mark.parametrize("case", VECTORS.cases, ids=lambda c: c.id)
def test_every_request_fits_its_contract(case: VectorCase) -> None:
    for name, value, args in _requests(case):
        _validator(OPS[name]["input"]).validate(value)
        _validator(OPS[name]["args"]).validate(args)
    if "input_b64" in case.raw:
        assert OPS[case.operation]["input_b64"], case.id


def test_every_expected_value_and_error_code_is_in_the_contract() -> None:
    for case in VECTORS.cases:
        contract = OPS[case.operation]
        listed = {e["code"]: e["vectors"] for e in contract["errors"]}
        if case.result == "valid" and "expected" in case.raw:
            _validator(contract["output"]).validate(case.raw["expected"])
        if case.result == "invalid":
            assert listed.get(case.raw["error"]) is True, (case.id, case.raw["error"])
        strict = case.raw.get("strict", {})
        if "error" in strict:
            assert strict["error"] in listed, (case.id, strict["error"])


def test_every_code_marked_as_expected_is_expected_by_a_case() -> None:
    expected = {(c.operation, c.raw["error"]) for c in VECTORS.cases if c.result == "invalid"}
    for name, op in OPS.items():
        for error in op["errors"]:
            assert error["vectors"] == ((name, error["code"]) in expected), (name, error)


def test_this_library_answers_within_the_contracts() -> None:
    """Every value our library answers fits the output schema; every code it refuses with is
    in the table."""
    for case in VECTORS.cases:
        requests = [(case.operation, decode_input(case.raw), case.raw.get("args"))]
        if case.has_round_trip and case.format_operation is not None:
            requests.append((case.format_operation, case.raw["expected"], case.raw.get("args")))
        for name, value, args in requests:
            answer = run_op(name, value, args)
            if answer["ok"]:
                _validator(OPS[name]["output"]).validate(answer["value"])
            else:
                codes = {e["code"] for e in OPS[name]["errors"]}
                assert answer["error"]["code"] in codes, (case.id, name, answer["error"])
