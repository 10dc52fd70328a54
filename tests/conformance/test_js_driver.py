"""The JavaScript driver of conformance/examples/: a second implementation, in plain Node.js,
passes every case it implements, with every report written (``-o``), as an implementer's CI
runs it."""

from __future__ import annotations

import io
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from simplex_protocols.conformance._vectors import load_vectors
from simplex_protocols.conformance.cli import main

# slow: runs a Node.js process over every vector
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js) is not installed"),
]

ROOT = Path(__file__).resolve().parents[2]
DRIVER = "conformance/examples/driver.js"

#: The families the driver covers: the Service RPC envelope, signing and llms.txt.
COVERED = {
    "rpc.request",
    "rpc.extra_members",
    "rpc.response",
    "rpc.error_class",
    "rpc.error_rules",
    "sizes.retry_after",
    "sizes.depth_request",
    "sizes.depth_response",
    "rpc.keys",
    "rpc.sign",
    "rpc.sign_kat",
    "rpc.request_key",
    "rpc.request_key_rules",
    "llmstxt.entry",
    "llmstxt.forms",
    "llmstxt.render",
    "llmstxt.section",
    "sizes.llms_line",
}


@pytest.fixture(scope="module")
def js_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, object], Path]:
    out_dir = tmp_path_factory.mktemp("js") / "out"
    stdout = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # the command line as the documentation shows it
        code = main(
            ["vectors", "--impl", f"node {DRIVER}", "-o", str(out_dir)],
            stdout=stdout,
            stderr=io.StringIO(),
            progress=False,
        )
    report = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    return code, report, out_dir


def test_the_js_driver_passes_every_case_it_implements(
    js_run: tuple[int, dict[str, object], Path],
) -> None:
    code, report, out_dir = js_run
    runs = report["runs"]
    assert isinstance(runs, list)
    verdicts = Counter(r["verdict"] for r in runs)
    assert set(verdicts) <= {"PASS", "ACCEPTABLE", "UNTESTABLE"}, verdicts
    assert code == 0
    for name in ("report.txt", "junit.xml", "report.md"):
        assert (out_dir / name).is_file()


def test_the_js_driver_covers_envelopes_signing_and_llms_txt(
    js_run: tuple[int, dict[str, object], Path],
) -> None:
    _, report, _ = js_run
    family = {c.id: c.family for c in load_vectors().cases}
    measured: Counter[str] = Counter()
    untestable: set[str] = set()
    for run in report["runs"]:  # type: ignore[attr-defined]
        fam = family[run["check"].removesuffix("+format")]
        if run["verdict"] == "UNTESTABLE":
            untestable.add(fam)
        else:
            measured[fam] += 1
    assert set(measured) >= COVERED
    # What it does not implement it does not claim: those cases are UNTESTABLE, never failed.
    assert not COVERED & untestable
    hello = report["provenance"]["implementation"]  # type: ignore[index]
    assert hello["language"] == "javascript"
