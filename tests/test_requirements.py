"""The requirement index (spec/requirements.json), its schema, the ambiguity register, the IDs
cited across the project, and the spec-drift check of scripts/spec_sentences.py."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = ROOT / "spec"
#: The spec's text is not part of the repository. Where a checkout sits next to a copy of it
#: (or SIMPLEX_PROTOCOLS_SPEC_TEXT names one), the drift check runs against it.
SPEC_TEXT = Path(
    os.environ.get(
        "SIMPLEX_PROTOCOLS_SPEC_TEXT", ROOT.parent / "shared" / "seeds" / "001_a8d74cbce07bedd1.txt"
    )
)

LEVELS = {"MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY"}
GROUPS = ("LLMS", "DECL", "NAME", "CALL", "RPC", "MCP", "A2A")
TOP_SECTIONS = {
    "Overview",
    "Addresses in llms.txt",
    "Profile declarations",
    "Chat transport",
    "Service RPC transport",
    "MCP binding",
    "A2A binding",
}
MODULES = {
    "simplex_protocols.llmstxt",
    "simplex_protocols.declarations",
    "simplex_protocols.chat_call",
    "simplex_protocols.rpc",
    "simplex_protocols.core",
    "simplex_protocols.transports.chat",
    "simplex_protocols.transports.service_rpc",
    "simplex_protocols.bindings.mcp",
    "simplex_protocols.bindings.a2a",
    "simplex_protocols.bot",
    "simplex_protocols.sim",
    "conformance",
}

#: The IDs of the first version of the index. Code and tests cite them
#: already: they are never renamed, renumbered or removed.
_FIRST_INDEX = """
    LLMS-SEC-1 LLMS-ITEM-1 LLMS-NOTES-1 LLMS-NOTES-2 LLMS-NOTES-3 LLMS-NOTES-4 LLMS-NOTES-5
    LLMS-TYPE-1 LLMS-TITLE-1 LLMS-OTHER-1
    DECL-PROTO-1 DECL-PROTO-2 DECL-PROTO-3 DECL-PROTO-4 DECL-PROTO-5 DECL-PROTO-6 DECL-PROTO-7
    DECL-PROTO-8 DECL-PROTO-9 DECL-PROTO-10 DECL-PROTO-11 DECL-PROTO-12 DECL-PROTO-13
    DECL-AUD-1 DECL-AUD-2 DECL-AUD-3 DECL-AUD-4 DECL-AUD-5 DECL-SERVES-1 DECL-PREC-1
    NAME-1 NAME-2 NAME-3
    CALL-CMD-1 CALL-CMD-2 CALL-CMD-3 CALL-CMD-4 CALL-GRP-1 CALL-GRP-2 CALL-BOT-1 CALL-REP-1
    CALL-REP-2 CALL-REP-3 CALL-CLR-1 CALL-CLR-2 CALL-CLR-3 CALL-CLR-4 CALL-CLR-5 CALL-VIS-1
    CALL-SIZE-1 CALL-SIZE-2 CALL-SIZE-3
    RPC-CMD-1 RPC-CMD-2 RPC-CMD-3 RPC-CONN-1 RPC-CORE-1 RPC-CORE-2 RPC-LIM-1 RPC-LIM-2 RPC-LIM-3
    RPC-REQ-1 RPC-REQ-2 RPC-REQ-3 RPC-REQ-4 RPC-REQ-5 RPC-REQ-6 RPC-REQ-7
    RPC-ENV-1 RPC-ENV-2 RPC-ENV-3 RPC-ENV-4
    RPC-ERR-1 RPC-ERR-2 RPC-ERR-3 RPC-ERR-4 RPC-ERR-5 RPC-ERR-6 RPC-ERR-7
    RPC-SIG-1 RPC-SIG-2 RPC-SIG-3 RPC-SIG-4 RPC-SIG-5 RPC-SIG-6 RPC-SIG-7
    MCP-MSG-1 MCP-MSG-2 MCP-MSG-3 MCP-MSG-4 MCP-MSG-5 MCP-MSG-6 MCP-MSG-7 MCP-MSG-8
    MCP-VER-1 MCP-VER-2 MCP-VER-3 MCP-VER-4 MCP-CAP-1 MCP-CAP-2
    A2A-ID-1 A2A-ID-2 A2A-ID-3 A2A-MSG-1 A2A-MSG-2 A2A-MSG-3 A2A-MSG-4
    A2A-SP-1 A2A-SP-2 A2A-SP-3 A2A-SP-4 A2A-SP-5 A2A-SP-6
    A2A-STR-1 A2A-STR-2 A2A-STR-3 A2A-STR-4 A2A-STR-5 A2A-STR-6 A2A-PUSH-1
    A2A-AUTHZ-1 A2A-AUTHZ-2 A2A-AUTHZ-3 A2A-AUTHZ-4 A2A-RPC-1 A2A-RPC-2 A2A-RPC-3 A2A-RPC-4
    A2A-CARD-1 A2A-CARD-2
"""
FIRST_INDEX_IDS = frozenset(_FIRST_INDEX.split())

#: An ID-shaped token anywhere in code, tests, vectors or docs (SEC and PRIV included, so
#: that a citation of a reserved prefix fails: they have no entries yet).
ID_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_-])"
    r"(?:NAME-[0-9]+|(?:LLMS|DECL|CALL|RPC|MCP|A2A|SEC|PRIV)-[A-Z][A-Z0-9]*-[0-9]+)"
    r"(?![A-Za-z0-9_])"
)
MARK_CALL = re.compile(r"mark\.requirement\(([^)]*)\)")
STRING_LITERAL = re.compile(r"""(?P<q>["'])(?P<s>[^"'\n]*)(?P=q)""")
TEST_NAME = re.compile(r"\bdef (test_[a-z0-9_]+)")


def _load_script() -> ModuleType:
    path = ROOT / "scripts" / "spec_sentences.py"
    spec = importlib.util.spec_from_file_location("spec_sentences", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("spec_sentences", module)
    spec.loader.exec_module(module)
    return module


spec_sentences = _load_script()


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def index() -> dict[str, Any]:
    data: dict[str, Any] = _read_json(SPEC_DIR / "requirements.json")
    return data


@pytest.fixture(scope="module")
def register() -> dict[str, Any]:
    data: dict[str, Any] = _read_json(SPEC_DIR / "ambiguities.json")
    return data


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    data: dict[str, Any] = _read_json(SPEC_DIR / "requirements.schema.json")
    return data


@pytest.fixture(scope="module")
def known_ids(index: dict[str, Any]) -> set[str]:
    return {r["id"] for r in index["requirements"]}


def _split_id(rid: str) -> tuple[str, str, int]:
    parts = rid.split("-")
    if len(parts) == 2:
        return parts[0], "", int(parts[1])
    return parts[0], parts[1], int(parts[2])


# --------------------------------------------------------------------- the index itself


def test_schema_is_a_valid_2020_12_schema(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)


def test_requirements_file_validates_against_its_schema(
    index: dict[str, Any], schema: dict[str, Any]
) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    problems = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(index)]
    assert problems == []


def test_schema_rejects_a_bcp14_entry_with_level_info(
    index: dict[str, Any], schema: dict[str, Any]
) -> None:
    broken = json.loads(json.dumps(index))
    entry = next(r for r in broken["requirements"] if r["keyword"] == "bcp14")
    entry["level"] = "INFO"
    assert not jsonschema.Draft202012Validator(schema).is_valid(broken)


def test_ids_are_unique(index: dict[str, Any]) -> None:
    ids = [r["id"] for r in index["requirements"]]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert duplicates == []


def test_ids_of_the_first_index_are_all_kept(known_ids: set[str]) -> None:
    assert sorted(FIRST_INDEX_IDS - known_ids) == []


def test_numbering_of_each_group_has_no_gaps(known_ids: set[str]) -> None:
    numbers: dict[tuple[str, str], list[int]] = defaultdict(list)
    for rid in known_ids:
        group, sub, n = _split_id(rid)
        numbers[(group, sub)].append(n)
    gaps = {
        f"{g}-{s}".rstrip("-"): sorted(set(range(1, max(ns) + 1)) - set(ns))
        for (g, s), ns in numbers.items()
        if sorted(ns) != list(range(1, max(ns) + 1))
    }
    assert gaps == {}


def test_reserved_prefixes_are_recorded_in_the_header_and_unused(
    index: dict[str, Any], known_ids: set[str]
) -> None:
    reserved = {r["prefix"] for r in index["reserved"]}
    assert reserved == {"SEC", "PRIV"}
    assert [i for i in known_ids if i.split("-")[0] in reserved] == []


def test_levels_follow_keywords(index: dict[str, Any]) -> None:
    wrong = []
    for r in index["requirements"]:
        level, keyword = r["level"], r["keyword"]
        ok = {
            "bcp14": level in LEVELS,
            "declarative": level in LEVELS,
            "derived": level in {"SHOULD", "SHOULD NOT"},
            "info": level == "INFO",
        }[keyword]
        if not ok:
            wrong.append((r["id"], keyword, level))
    assert wrong == []


def test_sections_are_paths_under_the_spec_headings(index: dict[str, Any]) -> None:
    outside = [
        (r["id"], r["section"])
        for r in index["requirements"]
        if r["section"].split(" > ")[0] not in TOP_SECTIONS
    ]
    assert outside == []


def test_modules_are_known_packages_of_the_project(index: dict[str, Any]) -> None:
    unknown = sorted({m for r in index["requirements"] for m in r["modules"]} - MODULES)
    assert unknown == []


def test_entries_with_live_or_caller_checks_name_the_conformance_suite(
    index: dict[str, Any],
) -> None:
    missing = [
        r["id"]
        for r in index["requirements"]
        if isinstance(r["testability"], list)
        and {"live", "caller"} & set(r["testability"])
        and "conformance" not in r["modules"]
    ]
    assert missing == []


def test_only_informative_entries_are_excluded_from_checks(index: dict[str, Any]) -> None:
    unchecked = [
        r["id"]
        for r in index["requirements"]
        if r["level"] != "INFO" and not isinstance(r["testability"], list)
    ]
    assert unchecked == []


# --------------------------------------------------------------------- ambiguity register


def test_register_validates_against_its_schema(
    register: dict[str, Any], schema: dict[str, Any]
) -> None:
    sub = {**schema["$defs"]["ambiguityRegister"], "$defs": schema["$defs"]}
    validator = jsonschema.Draft202012Validator(sub)
    problems = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(register)]
    assert problems == []


def test_register_ids_are_numbered_from_one_without_gaps(register: dict[str, Any]) -> None:
    ids = [a["id"] for a in register["ambiguities"]]
    assert ids == [f"AMB-{n}" for n in range(1, len(ids) + 1)]


def test_every_ambiguity_names_existing_requirements(
    register: dict[str, Any], known_ids: set[str]
) -> None:
    unknown = {
        a["id"]: sorted(set(a["requirements"]) - known_ids)
        for a in register["ambiguities"]
        if set(a["requirements"]) - known_ids
    }
    assert unknown == {}


def test_readings_taken_and_acceptable_are_listed_readings(register: dict[str, Any]) -> None:
    wrong = []
    for a in register["ambiguities"]:
        readings = {r["id"] for r in a["readings"]}
        if a["reading_taken"]["reading"] not in readings:
            wrong.append((a["id"], "reading_taken"))
        if not set(a["acceptable"]) <= readings:
            wrong.append((a["id"], "acceptable"))
        if len(readings) != len(a["readings"]):
            wrong.append((a["id"], "duplicate reading id"))
    assert wrong == []


def test_every_referenced_ambiguity_exists_and_lists_the_requirement_back(
    index: dict[str, Any], register: dict[str, Any]
) -> None:
    by_id = {a["id"]: set(a["requirements"]) for a in register["ambiguities"]}
    wrong = [
        (r["id"], r["ambiguity"])
        for r in index["requirements"]
        if "ambiguity" in r and r["id"] not in by_id.get(r["ambiguity"], set())
    ]
    assert wrong == []


# --------------------------------------------------------------------- IDs cited elsewhere


def _files(pattern: str, *roots: str) -> Iterator[Path]:
    for root in roots:
        base = ROOT / root
        if base.is_dir():
            yield from (p for p in sorted(base.rglob(pattern)) if ".venv" not in p.parts)


def _vector_citations(data: Any) -> Iterator[str]:
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "requirements" and isinstance(value, list):
                yield from (v for v in value if isinstance(v, str))
            else:
                yield from _vector_citations(value)
    elif isinstance(data, list):
        for item in data:
            yield from _vector_citations(item)


def citations_in_text(text: str, subgroups: dict[str, set[str]]) -> set[str]:
    """Requirement IDs a source or Markdown file cites: ID-shaped tokens, every string in a
    ``mark.requirement(...)``, and test names that start with an ID (``test_rpc_sig_3_...``)
    for the groups and subgroups the index knows."""
    cited = set(ID_TOKEN.findall(text))
    for call in MARK_CALL.finditer(text):
        cited.update(m.group("s") for m in STRING_LITERAL.finditer(call.group(1)))
    for name in TEST_NAME.findall(text):
        words = name.split("_")[1:]
        if len(words) >= 2 and words[0] == "name" and words[1].isdigit():
            cited.add(f"NAME-{words[1]}")
        elif (
            len(words) >= 3
            and words[0].upper() in subgroups
            and words[1].upper() in subgroups[words[0].upper()]
            and words[2].isdigit()
        ):
            cited.add(f"{words[0].upper()}-{words[1].upper()}-{words[2]}")
    return cited


def _subgroups(known_ids: set[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for rid in known_ids:
        group, sub, _ = _split_id(rid)
        if sub:
            out[group].add(sub)
    return out


def test_citation_scanner_finds_tokens_marks_and_test_names(known_ids: set[str]) -> None:
    made_up = "RPC-SIG-" + "99"
    text = (
        "# RPC-SIG-3: the check\n"
        "@pytest.mark." + "requirement('CALL-CMD-1', 'rpc-sig-3')\n"
        "def test_rpc_sig_4_unsigned_request_with_key() -> None: ...\n"
        "def test_call_with_2_members() -> None: ...\n"
        f"x = '{made_up}'  # SHA3-256, A2A-Version, MCP-2026-07-28 are not IDs\n"
    )
    cited = citations_in_text(text, _subgroups(known_ids))
    assert cited == {"RPC-SIG-3", "CALL-CMD-1", "rpc-sig-3", "RPC-SIG-4", made_up}
    assert cited - known_ids == {"rpc-sig-3", made_up}


def test_every_cited_requirement_exists(known_ids: set[str]) -> None:
    subgroups = _subgroups(known_ids)
    unknown: dict[str, list[str]] = {}
    for path in _files("*.json", "spec/vectors"):
        if path.name.endswith(".schema.json"):
            continue
        try:
            data = _read_json(path)
        except json.JSONDecodeError:
            continue  # a file being written right now; tests/test_vectors.py checks its shape
        bad = sorted(set(_vector_citations(data)) - known_ids)
        if bad:
            unknown[str(path.relative_to(ROOT))] = bad
    sources = [
        *_files("*.py", "tests", "simplex_protocols", "conformance", "mcp_server"),
        *_files("*.md", "docs", "spec", "conformance", "mcp_server"),
    ]
    for path in sources:
        bad = sorted(citations_in_text(path.read_text(encoding="utf-8"), subgroups) - known_ids)
        if bad:
            unknown[str(path.relative_to(ROOT))] = bad
    assert unknown == {}


# --------------------------------------------------------------------- the drift script


SAMPLE = """\
Title of a sample spec

Abstract
Rules
Notes

Abstract

This sample is written for the tests.

Rules

Widgets
A widget MUST carry a colour.
A widget has   exactly one owner.
Mentioning "MUST" or "SHOULD" here does nothing.

Notes

A reader SHOULD NOT paint widgets.
"""


def _entry(rid: str, section: str, sentence: str, level: str, keyword: str) -> dict[str, Any]:
    return {
        "id": rid,
        "section": section,
        "level": level,
        "keyword": keyword,
        "summary": "a sample entry for the drift tests",
        "roles": ["bot"],
        "testability": ["vector"],
        "modules": ["conformance"],
        "sentence_sha256": spec_sentences.sentence_hash(sentence),
    }


def _sample_index() -> dict[str, Any]:
    return {
        "informative_sections": ["Abstract"],
        "requirements": [
            _entry(
                "SAMPLE-X-1", "Rules > Widgets", "A widget MUST carry a colour.", "MUST", "bcp14"
            ),
            _entry(
                "SAMPLE-X-2",
                "Rules > Widgets",
                "A widget has exactly one owner.",
                "MUST",
                "declarative",
            ),
            _entry(
                "SAMPLE-X-3", "Notes", "A reader SHOULD NOT paint widgets.", "SHOULD NOT", "bcp14"
            ),
        ],
    }


def test_normalisation_is_nfc_and_collapses_whitespace() -> None:
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    assert spec_sentences.normalise(f"  {decomposed}\t\n one  ") == f"{composed} one"
    assert spec_sentences.sentence_hash(decomposed) == spec_sentences.sentence_hash(composed)


def test_quoted_keywords_are_mentions_not_uses() -> None:
    assert spec_sentences.bcp14_keywords('The words "MUST" and "SHOULD" appear.') == []
    assert spec_sentences.bcp14_keywords("It MUST NOT fail and MAY stop.") == ["MUST NOT", "MAY"]
    assert spec_sentences.bcp14_keywords("MAYBE MUSTARD") == []


def test_sentences_carry_their_section() -> None:
    sentences = spec_sentences.split_sentences(SAMPLE, ["Rules > Widgets"])
    where = {s.text: s.section for s in sentences}
    assert where["A widget has exactly one owner."] == "Rules > Widgets"
    assert where["A reader SHOULD NOT paint widgets."] == "Notes"
    assert where["This sample is written for the tests."] == "Abstract"


def test_markdown_copy_is_split_by_its_headings() -> None:
    markdown = "# Title\n\n## Abstract\n\nShort.\n\n## Rules\n\n### Widgets\n\nA widget MUST carry a colour.\n"
    sentences = spec_sentences.split_sentences(markdown)
    assert [(s.section, s.text) for s in sentences][-1] == (
        "Rules > Widgets",
        "A widget MUST carry a colour.",
    )


def test_drift_check_passes_on_a_matching_index() -> None:
    findings = spec_sentences.check(SAMPLE, _sample_index())
    assert not findings.failed
    assert findings.unkeyed_declarative == []


def test_drift_check_reports_an_unindexed_bcp14_sentence() -> None:
    index = _sample_index()
    del index["requirements"][2]
    findings = spec_sentences.check(SAMPLE, index)
    assert [s.text for s in findings.unkeyed_bcp14] == ["A reader SHOULD NOT paint widgets."]
    assert findings.failed


def test_drift_check_reports_changed_text_moved_sentences_and_level_changes() -> None:
    changed = SAMPLE.replace("exactly one owner", "one owner or more").replace(
        "SHOULD NOT paint", "MUST NOT paint"
    )
    findings = spec_sentences.check(changed, _sample_index())
    assert [r["id"] for r, _ in findings.missing] == ["SAMPLE-X-2", "SAMPLE-X-3"]

    index = _sample_index()
    index["requirements"][0]["section"] = "Notes"
    index["requirements"][1]["level"] = "SHOULD"
    index["requirements"][1]["keyword"] = "bcp14"
    findings = spec_sentences.check(SAMPLE, index)
    assert [r["id"] for r, _ in findings.moved] == ["SAMPLE-X-1"]
    assert [r["id"] for r, _ in findings.level] == ["SAMPLE-X-2"]


def test_drift_check_lists_uncovered_declarative_sentences() -> None:
    index = _sample_index()
    del index["requirements"][1]
    findings = spec_sentences.check(SAMPLE, index)
    assert not findings.failed
    assert [s.text for s in findings.unkeyed_declarative] == ["A widget has exactly one owner."]


def test_script_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.txt"
    spec.write_text(SAMPLE, encoding="utf-8")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_sample_index()), encoding="utf-8")
    assert spec_sentences.main([str(spec), "--requirements", str(good)]) == 0
    bad_index = _sample_index()
    bad_index["requirements"][0]["sentence_sha256"] = "0" * 64
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(bad_index), encoding="utf-8")
    assert spec_sentences.main([str(spec), "--requirements", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "(a) 1 sentence(s)" in out
    assert "SAMPLE-X-1: no sentence has hash" in out


needs_spec_text = pytest.mark.skipif(
    not SPEC_TEXT.is_file(),
    reason="the spec text is not in this checkout (set SIMPLEX_PROTOCOLS_SPEC_TEXT to a copy)",
)


@needs_spec_text
def test_index_matches_the_spec_text(index: dict[str, Any]) -> None:
    findings = spec_sentences.check(SPEC_TEXT.read_text(encoding="utf-8"), index)
    assert [s.text for s in findings.unkeyed_bcp14] == []
    assert [r["id"] for r, _ in findings.missing] == []
    assert [r["id"] for r, _ in findings.moved] == []
    assert [r["id"] for r, _ in findings.level] == []
    # every declarative sentence of the normative sections is indexed too
    assert [s.text for s in findings.unkeyed_declarative] == []


@needs_spec_text
def test_our_wording_does_not_copy_the_spec(
    index: dict[str, Any], register: dict[str, Any]
) -> None:
    """No run of seven words of a summary, note or register text repeats the spec's prose."""

    def words(text: str) -> list[str]:
        return re.findall(r"[\w'./-]+", text.lower())

    run = 7
    shingles: set[tuple[str, ...]] = set()
    for s in spec_sentences.split_sentences(SPEC_TEXT.read_text(encoding="utf-8")):
        w = words(s.text)
        shingles.update(tuple(w[i : i + run]) for i in range(len(w) - run + 1))
    texts = [(r["id"], r["summary"]) for r in index["requirements"]]
    texts += [(r["id"], r["notes"]) for r in index["requirements"] if "notes" in r]
    for a in register["ambiguities"]:
        texts += [(a["id"], a[k]) for k in ("title", "issue", "suite", "question_for_authors")]
        texts += [(a["id"], a["reading_taken"]["behaviour"])]
        texts += [(a["id"], r["text"]) for r in a["readings"]]
    copied = []
    for label, text in texts:
        w = words(text)
        hits = [
            " ".join(w[i : i + run])
            for i in range(len(w) - run + 1)
            if tuple(w[i : i + run]) in shingles
        ]
        if hits:
            copied.append((label, hits[0]))
    assert copied == []


def test_the_documentation_lists_every_ambiguity(register: dict[str, Any]) -> None:
    doc = (ROOT / "docs" / "requirements.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| (AMB-[0-9]+) \|", doc, flags=re.MULTILINE))
    assert listed == {a["id"] for a in register["ambiguities"]}
