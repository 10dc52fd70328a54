"""How the vector judge reads an answer: the strict profile (--strict), numbers beyond a
double's precision, and --codes lenient."""

from __future__ import annotations

import io
from typing import Any

import pytest

from simplex_protocols.conformance._model import Verdict
from simplex_protocols.conformance._vectors import (
    VectorCase,
    json_equal,
    judge_answer,
    load_vectors,
)
from simplex_protocols.conformance.cli import main

CASES = {case.id: case for case in load_vectors().cases}


def _ok(value: Any) -> dict[str, Any]:
    return {"ok": True, "value": value}


def _refused(code: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code}}


def test_a_hardening_case_is_acceptable_either_way_and_strict_only_under_strict() -> None:
    case = CASES["rpc.request/duplicate-protocol"]
    taken = _ok({"protocol": "a2a", "request": {}, "request_key": None, "extra": {}})
    assert judge_answer(case, taken).verdict is Verdict.ACCEPTABLE
    assert judge_answer(case, _refused("duplicate_key")).verdict is Verdict.ACCEPTABLE
    # The strict profile is a hardening, not a MUST: breaking it is a WARN, which --strict fails.
    strict = judge_answer(case, taken, strict=True)
    assert strict.verdict is Verdict.WARN
    assert strict.evidence["profile"] == "strict"
    assert judge_answer(case, _refused("duplicate_key"), strict=True).verdict is Verdict.PASS


def test_a_number_beyond_a_double_equals_its_nearest_double_unless_strict() -> None:
    case = CASES["rpc.request/big-integer"]
    as_double = _ok(
        {
            "protocol": "mcp",
            "request": {"n": 1.2345678901234568e29},
            "request_key": None,
            "extra": {},
        }
    )
    assert judge_answer(case, as_double).verdict is Verdict.PASS
    assert judge_answer(case, as_double, strict=True).verdict is Verdict.WARN
    text = '{"protocol":"mcp","request":{"n":1.2345678901234568e+29}}'
    assert judge_answer(case, _ok(text), round_trip=True).verdict is Verdict.PASS
    assert judge_answer(case, _ok(text), round_trip=True, strict=True).verdict is Verdict.WARN
    # Only beyond 2**53: below it, a double that differs is another number.
    assert not json_equal(2**53 - 1, float(2**53), exact=False)
    assert json_equal(2**53 + 1, float(2**53), exact=False)
    assert not json_equal(2**53 + 1, float(2**53))
    wrong = '{"protocol":"mcp","request":{"n":1.2345678901234e+29}}'
    assert judge_answer(case, _ok(wrong), round_trip=True).verdict is Verdict.FAIL


def _invalid_case() -> VectorCase:
    return CASES["rpc.request/protocol-uppercase"]


def test_codes_lenient_accepts_another_refusal_and_says_so() -> None:
    case = _invalid_case()
    assert judge_answer(case, _refused("E_PROTOCOL")).verdict is Verdict.FAIL
    lenient = judge_answer(case, _refused("E_PROTOCOL"), lenient_codes=True)
    assert lenient.verdict is Verdict.ACCEPTABLE
    assert lenient.evidence["lenient_code"] == {
        "expected": "bad_protocol_name",
        "got": "E_PROTOCOL",
    }
    # Accepting an invalid input is still a failure.
    accepted = _ok({"protocol": "MCP", "request": {}, "request_key": None, "extra": {}})
    assert judge_answer(case, accepted, lenient_codes=True).verdict is Verdict.FAIL
    assert judge_answer(case, _refused("bad_protocol_name"), lenient_codes=True).verdict is (
        Verdict.PASS
    )


@pytest.mark.parametrize("value", ["bogus", ""])
def test_codes_takes_exact_or_lenient(value: str) -> None:
    err = io.StringIO()
    code = main(
        ["vectors", "--codes", value, "--filter", "rpc.keys"],
        stdout=io.StringIO(),
        stderr=err,
        progress=False,
    )
    assert code == 64
    assert "--codes" in err.getvalue()


def test_our_library_passes_the_strict_profile() -> None:
    out = io.StringIO()
    code = main(["vectors", "--strict"], stdout=out, stderr=io.StringIO(), progress=False)
    assert code == 0, out.getvalue()[-2000:]
    assert "WARN" not in out.getvalue().split("checks measured", 1)[1]
