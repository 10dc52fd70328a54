"""Check spec/requirements.json against the text of the spec, sentence by sentence.

Usage:

    python scripts/spec_sentences.py SPEC.txt              # the drift check (exit 1 on a finding)
    python scripts/spec_sentences.py SPEC.txt --strict     # also fail on unindexed rules
    python scripts/spec_sentences.py SPEC.txt --list       # every sentence: line, hash, section, IDs
    python scripts/spec_sentences.py SPEC.txt --find TEXT  # the sentences that contain TEXT

The spec's prose is not part of this repository, so the text is read from the path given.
The requirement index points at sentences by hash only (``sentence_sha256`` and
``more_sentences_sha256``).

Normalisation of a sentence before hashing: Unicode NFC, every run of whitespace collapsed to
one space, leading and trailing whitespace stripped. Splitting: each line of the text is a
paragraph (the published text writes one paragraph or list item per line); a leading Markdown
list or heading marker is dropped; a paragraph is cut after ``.``, ``!`` or ``?`` followed by
whitespace. Sections come from Markdown headings when the text has them, otherwise from the
table of contents (top level) and the section paths the index names (subsections).

The check reports:

(a) sentences that use a BCP 14 keyword (in capitals, not inside quotes) that no requirement
    carries;
(b) drift: a requirement whose sentence (or one of its further sentences) is not in the text,
    whose sentence sits under another section than the entry names, or whose level no longer
    matches the keyword the sentence uses (a ``bcp14`` entry whose sentence lost or changed
    its keyword, a plain entry whose sentence gained one).

Both make the exit status 1. Sentences of normative sections that have a normative verb (a
declarative statement) but no requirement are listed too, for a reviewer to judge; they fail
the run only with ``--strict``. Sections the index names in ``informative_sections`` are left
out of that list.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REQUIREMENTS = ROOT / "spec" / "requirements.json"

#: BCP 14 keywords, longest first so that "MUST NOT" wins over "MUST".
BCP14_KEYWORDS = (
    "NOT RECOMMENDED",
    "MUST NOT",
    "SHALL NOT",
    "SHOULD NOT",
    "REQUIRED",
    "RECOMMENDED",
    "OPTIONAL",
    "MUST",
    "SHALL",
    "SHOULD",
    "MAY",
)
# A keyword counts when it is used, not when it is mentioned: "MUST" in quotes (as in the
# Conventions section) is a mention.
_BCP14_RE = re.compile(
    r'(?<![A-Za-z"\u201c])('
    + "|".join(re.escape(k) for k in BCP14_KEYWORDS)
    + r')(?![A-Za-z"\u201d])'
)

#: Verbs and phrases that mark a plain statement as a rule ("A bot answers ...", "A caller
#: accepts replies only from ...", "An absent transport is false").
_NORMATIVE_VERB_RE = re.compile(
    r"\b("
    r"answers?|answered|accepts?|accepted|ignores?|ignored|requires?|required|"
    r"is|are|has|have|uses?|carr(?:y|ies)|sends?|sent|ends?|never|only|exactly|"
    r"declares?|lists?|matches|match|collects?|collected|refuses?|fails?|applies|"
    r"precedence|consists|defines?|copied|removes?|resumes?|replaced|signs?|verifies|"
    r"treats?|repeats?|delivers?|receives?|publishe[sd]|served?|serves|quotes?"
    r")\b"
)

_LIST_MARKER_RE = re.compile(r"^(?:[-*+]\s+|#{1,6}\s+)")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_WS_RE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFC, whitespace runs collapsed to one space, stripped: the form that is hashed."""
    return _WS_RE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def sentence_hash(text: str) -> str:
    """SHA-256 (hex) of the normalised sentence, as stored in ``sentence_sha256``."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def bcp14_keywords(sentence: str) -> list[str]:
    """The BCP 14 keywords a sentence uses (quoted mentions excluded), in order."""
    return [m.group(1) for m in _BCP14_RE.finditer(sentence)]


def has_normative_verb(sentence: str) -> bool:
    return _NORMATIVE_VERB_RE.search(sentence) is not None


@dataclass(frozen=True)
class Sentence:
    line: int  # 1-based line of the spec text
    text: str  # normalised
    sha256: str
    section: str  # "Top > Sub", or "Top", or "" before the body starts

    @property
    def keywords(self) -> list[str]:
        return bcp14_keywords(self.text)


@dataclass
class Outline:
    """Headings of the spec: the top level from its table of contents, subsections as given."""

    top: list[str] = field(default_factory=list)
    sub: dict[str, set[str]] = field(default_factory=dict)


def _heading_key(line: str) -> str:
    return normalise(_LIST_MARKER_RE.sub("", line.strip()))


def read_outline(lines: Sequence[str], subsections: Iterable[str] = ()) -> Outline:
    """Top-level headings from the table of contents (the lines from the first "Abstract" up
    to the line before the second one); subsection paths ("Top > Sub") as given by the
    caller, usually the section paths named in the requirement index."""
    keys = [_heading_key(line) for line in lines]
    outline = Outline()
    try:
        first = keys.index("Abstract")
    except ValueError:
        return outline
    for key in keys[first:]:
        if not key:
            continue
        if key == "Abstract" and outline.top:
            break
        outline.top.append(key)
    for path in subsections:
        parts = [p.strip() for p in path.split(">")]
        if len(parts) >= 2:
            outline.sub.setdefault(parts[0], set()).add(parts[1])
    return outline


_MD_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*$")
_MD_ABSTRACT_RE = re.compile(r"^#{1,3}\s+Abstract\s*$", re.MULTILINE)


def _split_paragraph(number: int, paragraph: str, section: str) -> list[Sentence]:
    out = []
    for piece in _SENTENCE_END_RE.split(paragraph):
        piece = normalise(piece)
        if piece:
            out.append(Sentence(number, piece, sentence_hash(piece), section))
    return out


def _split_markdown(lines: Sequence[str]) -> list[Sentence]:
    """A Markdown copy of the spec: sections come from its headings (the level of the
    "Abstract" heading is the top level); inside fenced blocks no line is a heading."""
    top_level = min(
        len(m.group(1))
        for m in (_MD_HEADING_RE.match(line.strip()) for line in lines)
        if m and m.group(2) == "Abstract"
    )
    sentences: list[Sentence] = []
    top = sub = ""
    fenced = False
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        if not stripped:
            continue
        m = None if fenced else _MD_HEADING_RE.match(stripped)
        if m and len(m.group(1)) <= top_level + 1:
            if len(m.group(1)) == top_level:
                top, sub = normalise(m.group(2)), ""
            elif len(m.group(1)) == top_level + 1:
                sub = normalise(m.group(2))
            continue
        section = f"{top} > {sub}" if sub else top
        sentences += _split_paragraph(number, _heading_key(stripped), section)
    return sentences


def split_sentences(text: str, subsections: Iterable[str] = ()) -> list[Sentence]:
    """Every sentence of the text, with its line and the section it sits in.

    Two shapes of the text are understood: a Markdown copy (sections from ``#`` headings)
    and the plain rendering of the published page, where headings are bare lines: the top
    level is read from the table of contents, and subsection headings are recognised from
    ``subsections`` (the section paths the requirement index names).
    """
    lines = text.splitlines()
    if _MD_ABSTRACT_RE.search(text):
        return _split_markdown(lines)
    outline = read_outline(lines, subsections)
    top_set = set(outline.top)
    sentences: list[Sentence] = []
    top = sub = ""
    seen_toc_abstract = False
    in_body = False
    for number, raw in enumerate(lines, start=1):
        key = _heading_key(raw)
        if not key:
            continue
        if key == "Abstract":
            in_body = in_body or seen_toc_abstract
            seen_toc_abstract = True
        if in_body and key in top_set:
            top, sub = key, ""
            continue
        if in_body and key in outline.sub.get(top, set()):
            sub = key
            continue
        sentences += _split_paragraph(number, key, f"{top} > {sub}" if sub else top)
    return sentences


@dataclass
class Findings:
    unkeyed_bcp14: list[Sentence] = field(default_factory=list)
    missing: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    moved: list[tuple[dict[str, Any], list[Sentence]]] = field(default_factory=list)
    level: list[tuple[dict[str, Any], Sentence]] = field(default_factory=list)
    unkeyed_declarative: list[Sentence] = field(default_factory=list)

    @property
    def drifted(self) -> int:
        return len(self.missing) + len(self.moved) + len(self.level)

    @property
    def failed(self) -> bool:
        return bool(self.unkeyed_bcp14) or self.drifted > 0


def _looks_like_code(text: str) -> bool:
    # JSON schemas and examples, Markdown link items of the llms.txt example
    return text[:1] in '{}[]"'


def _section_is_informative(section: str, informative: Iterable[str]) -> bool:
    return any(section == s or section.startswith(s + " > ") for s in informative)


def check(spec_text: str, index: dict[str, Any]) -> Findings:
    """Compare the spec text with a loaded requirement index."""
    requirements: list[dict[str, Any]] = index["requirements"]
    informative: list[str] = index.get("informative_sections", [])
    sentences = split_sentences(spec_text, [r["section"] for r in requirements] + informative)
    by_hash: dict[str, list[Sentence]] = {}
    for s in sentences:
        by_hash.setdefault(s.sha256, []).append(s)
    carried = {r["sentence_sha256"] for r in requirements}
    for r in requirements:
        carried.update(r.get("more_sentences_sha256", []))
    findings = Findings()
    for s in sentences:
        if s.sha256 in carried or not s.section:
            continue
        if s.keywords:
            findings.unkeyed_bcp14.append(s)
        elif (
            has_normative_verb(s.text)
            and not _looks_like_code(s.text)
            and not _section_is_informative(s.section, informative)
        ):
            findings.unkeyed_declarative.append(s)
    for r in requirements:
        found = by_hash.get(r["sentence_sha256"], [])
        if not found:
            findings.missing.append((r, r["sentence_sha256"]))
            continue
        for extra in r.get("more_sentences_sha256", []):
            if extra not in by_hash:
                findings.missing.append((r, extra))
        here = [s for s in found if s.section == r["section"]]
        if not here:
            findings.moved.append((r, found))
            continue
        # A capitalised keyword in the spec fixes the level; a plain sentence must stay plain.
        keywords = here[0].keywords
        if r["keyword"] == "bcp14":
            if r["level"] not in keywords:
                findings.level.append((r, here[0]))
        elif keywords:
            findings.level.append((r, here[0]))
    return findings


def _ids_by_hash(index: dict[str, Any]) -> dict[str, list[str]]:
    """Requirement IDs by sentence hash; "(ID)" where the sentence is one of an entry's
    further sentences rather than its anchor."""
    out: dict[str, list[str]] = {}
    for r in index["requirements"]:
        out.setdefault(r["sentence_sha256"], []).append(r["id"])
        for extra in r.get("more_sentences_sha256", []):
            out.setdefault(extra, []).append(f"({r['id']})")
    return out


def _excerpt(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", type=Path, help="the spec text (not in this repository)")
    parser.add_argument("--requirements", type=Path, default=DEFAULT_REQUIREMENTS)
    parser.add_argument("--list", action="store_true", help="print every sentence and exit")
    parser.add_argument("--find", metavar="TEXT", help="print the sentences containing TEXT")
    parser.add_argument(
        "--strict", action="store_true", help="also fail on uncovered declarative sentences"
    )
    args = parser.parse_args(argv)

    spec_text = args.spec.read_text(encoding="utf-8")
    index = json.loads(args.requirements.read_text(encoding="utf-8"))
    ids = _ids_by_hash(index)

    if args.list or args.find is not None:
        needle = normalise(args.find).casefold() if args.find is not None else None
        sections = [r["section"] for r in index["requirements"]]
        sections += index.get("informative_sections", [])
        for s in split_sentences(spec_text, sections):
            if needle is not None and needle not in s.text.casefold():
                continue
            tag = ",".join(ids.get(s.sha256, [])) or "-"
            print(f"{s.line:4} {s.sha256[:16]} [{s.section}] {tag}")
            print(f"     {s.text}")
        return 0

    findings = check(spec_text, index)
    if findings.unkeyed_bcp14:
        print(
            f"(a) {len(findings.unkeyed_bcp14)} sentence(s) with a BCP 14 keyword and no requirement:"
        )
        for s in findings.unkeyed_bcp14:
            kws = " ".join(s.keywords)
            print(f"  line {s.line} [{s.section}] {s.sha256} {kws}: {_excerpt(s.text)}")
    if findings.drifted:
        print(f"(b) {findings.drifted} drift finding(s) between the index and the text:")
        for r, digest in findings.missing:
            print(f"  {r['id']}: no sentence has hash {digest}")
        for r, found in findings.moved:
            where = "; ".join(f"line {s.line} [{s.section}]" for s in found)
            print(f"  {r['id']}: section is {r['section']!r}, the sentence is at {where}")
        for r, s in findings.level:
            used = " ".join(s.keywords) or "no keyword"
            print(
                f"  {r['id']}: level {r['level']} ({r['keyword']}), the sentence at line "
                f"{s.line} uses {used}"
            )
    if findings.unkeyed_declarative:
        print(
            f"note: {len(findings.unkeyed_declarative)} declarative sentence(s) in normative "
            "sections carry no requirement (a gap, or text to review):"
        )
        for s in findings.unkeyed_declarative:
            print(f"  line {s.line} [{s.section}] {s.sha256[:16]}: {_excerpt(s.text)}")
    total = len(index["requirements"])
    if findings.failed or (args.strict and findings.unkeyed_declarative):
        print(f"FAIL: {total} requirements checked")
        return 1
    print(f"OK: {total} requirements match the text; every BCP 14 sentence is indexed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
