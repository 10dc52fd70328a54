"""Every report writer takes any answer a driver may give.

A driver in another language returns what its runtime makes of an input: JavaScript strings
hold lone surrogates, numbers may be beyond a double's range, a careless driver writes ``NaN``,
deep nesting, control characters or bytes that are not UTF-8. The suite must judge each one and
write every report (text, JSON, JUnit, Markdown, transcripts) as a readable file, whatever
came back.
"""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from simplex_protocols.conformance.cli import main

# slow: runs a driver in a subprocess
pytestmark = pytest.mark.slow

#: Answer lines, one per request in turn (raw bytes: some are not JSON or not UTF-8).
ODD_ANSWERS: list[bytes] = [
    b'{"ok":true,"value":"\\ud800 lone high"}',
    b'{"ok":true,"value":{"s":"\\udfff","t":"a\\u0000b\\u001b[31m\\u202e\\ufeff"}}',
    b'{"ok":true,"value":1e400}',
    b'{"ok":true,"value":-1' + b"0" * 5000 + b"}",
    b'{"ok":true,"value":123456789012345678901234567890}',
    b'{"ok":false,"error":{"code":"x\\u0000\\udc00","position":1e999}}',
    b'{"ok":true,"value":NaN}',
    b'{"ok":true,"value":' + b"[" * 600 + b"]" * 600 + b"}",
    b'{"ok":true,"value":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'\xff\xfe{"ok":true,"value":1}',
    b'{"ok":true,"value":{"a":1,"a":2}}',
    b'{"ok":false,"error":{"code":"\\ud83d"}}',
]

DRIVER = """\
import sys
answers = [bytes.fromhex(h) for h in {answers!r}]
out = sys.stdout.buffer
line = sys.stdin.readline()
out.write(b'{{"hello":"simplex-conformance/vectors/1","implementation":{{"name":"odd"}}}}\\n')
out.flush()
n = int(open({state!r}).read() or 0) if __import__("os").path.exists({state!r}) else 0
for line in sys.stdin:
    out.write(answers[n % len(answers)] + b"\\n")
    out.flush()
    n += 1
    open({state!r}, "w").write(str(n))
"""


def _long_int(digits: str) -> int | str:
    # Python refuses to turn more than 4,300 digits into an int; the test keeps them as text.
    return int(digits) if len(digits) < 4000 else digits


def _strict_json(text: str) -> Any:
    def refuse(token: str) -> Any:
        raise ValueError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse, parse_int=_long_int)


@pytest.fixture
def odd_run(tmp_path: Path) -> tuple[int, Path, str]:
    driver = tmp_path / "odd_driver.py"
    # The answer counter survives the restarts that garbage causes, so every answer is given.
    driver.write_text(
        DRIVER.format(answers=[a.hex() for a in ODD_ANSWERS], state=str(tmp_path / "n")),
        encoding="utf-8",
    )
    out_dir = tmp_path / "out"
    stdout = io.StringIO()
    code = main(
        [
            "vectors",
            "--impl",
            f"{shlex.quote(sys.executable)} {shlex.quote(str(driver))}",
            "--filter",
            "rpc.response",
            "-o",
            str(out_dir),
        ],
        stdout=stdout,
        stderr=io.StringIO(),
        progress=False,
    )
    return code, out_dir, stdout.getvalue()


def test_every_report_is_written_and_readable(odd_run: tuple[int, Path, str]) -> None:
    code, out_dir, printed = odd_run
    assert code == 1  # failures and errors, judged: not a crash
    assert "result: exit 1" in printed
    printed.encode("utf-8")  # what reached the terminal is encodable
    report = _strict_json((out_dir / "report.json").read_text(encoding="utf-8"))
    ET.fromstring((out_dir / "junit.xml").read_bytes())
    (out_dir / "report.md").read_text(encoding="utf-8")
    (out_dir / "report.txt").read_text(encoding="utf-8")
    transcripts = sorted((out_dir / "transcripts").rglob("*.jsonl"))
    assert len(transcripts) == len(report["runs"]) >= len(ODD_ANSWERS)
    for path in transcripts:
        for line in path.read_text(encoding="utf-8").splitlines():
            _strict_json(line)


def _answers(out_dir: Path) -> list[tuple[str, Any]]:
    """Each run's verdict and the answer line its transcript kept (``None`` when none)."""
    report = _strict_json((out_dir / "report.json").read_text(encoding="utf-8"))
    out = []
    for run in report["runs"]:
        lines = (out_dir / run["transcript"]).read_text(encoding="utf-8").splitlines()
        answer = next((i["line"] for i in map(_strict_json, lines) if i["dir"] == "in"), None)
        out.append((run["verdict"], answer))
    return out


def test_odd_values_are_kept_exactly(odd_run: tuple[int, Path, str]) -> None:
    _, out_dir, _ = odd_run
    values = [a.get("value") for _, a in _answers(out_dir) if a is not None and a.get("ok")]
    assert "\ud800 lone high" in values
    assert 123456789012345678901234567890 in values
    assert any(isinstance(v, float) and v == float("inf") for v in values)  # 1e400, as written
    text = "".join(
        p.read_text(encoding="utf-8") for p in (out_dir / "transcripts").rglob("*.jsonl")
    )
    assert "1E+400" in text and "-1" + "0" * 5000 in text
    assert '"\\ud800 lone high"' in text


def test_lines_that_are_not_json_are_errors_with_a_reason(odd_run: tuple[int, Path, str]) -> None:
    _, out_dir, _ = odd_run
    report = _strict_json((out_dir / "report.json").read_text(encoding="utf-8"))
    details = [r["detail"] for r in report["runs"] if r["verdict"] == "ERROR"]
    reasons = ("NaN is not a JSON value", "nested deeper than 512 levels", "not a UTF-8 line")
    for reason in reasons:
        assert any(reason in d for d in details), reason
    # Only those lines are errors: every other answer, however odd, was judged.
    assert all(any(reason in d for reason in reasons) for d in details), details


def test_the_markdown_table_of_requirements_says_what_was_expected(
    odd_run: tuple[int, Path, str],
) -> None:
    _, out_dir, _ = odd_run
    text = (out_dir / "report.md").read_text(encoding="utf-8")
    head = "| requirement | level | verdict | expected | baseline |"
    assert head in text
    rows = text.split(head, 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    assert rows
    for row in rows:
        expected = row.split(" | ")[3]
        assert expected.strip(), row  # what the first check that is not green expected
    assert any("refused with error" in row or "accepted" in row for row in rows)
