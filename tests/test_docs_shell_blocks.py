"""Every shell block of README.md and docs/*.md runs as shown, so that the examples cannot rot.

The rules, which docs/README writers follow:

- A shell block is a fenced block of ``sh``, ``bash`` or ``console``. An ``sh``/``bash`` block
  runs as a whole, as a bash script with ``-e -o pipefail``; in a ``console`` block the
  commands are the lines that start with ``$ `` (a line ending in ``\\`` goes on with the next
  line) and the other lines are their output, shown, not compared.
- The blocks of one document run in order, in one temporary folder that is also ``HOME``,
  with this environment's console scripts (and its ``python``) first on ``PATH``, as a reader
  types them into one terminal: each block starts where the previous one ended (its folder,
  its exported variables). A block fails the test on a non-zero exit, and so does a command
  that is not found (127).
- A command that ends with ``&`` keeps running in the background, as in a terminal: before the
  next block the test waits until each loopback port its line names (``--port N``,
  ``127.0.0.1:N``) accepts connections, as a reader waits for the server's first lines; and
  it fails at once if the process ends instead. Every process a document started is stopped
  (SIGTERM, then SIGKILL) after its last block.
- The ports the documents use for their servers (5225 for ``simplex-sim serve``, 5227 for a
  second one, 8080 for its websites) are replaced by free ports in each document's run, so that a server someone runs
  on this machine cannot make the test fail; nothing else of a command is changed.
- A block that cannot run here (it needs the internet, a real chat core or a person at a
  terminal) is preceded by the line ``<!-- not run: REASON -->``. Every such marker must have a
  reason and precede a shell block, and their number is fixed below: adding one is a decision
  this file records. README.md's first block, the repository's own two commands (``make demo``,
  ``make test``), cannot carry a marker (the README starts with it) and is the one exception:
  ``make test`` runs this test.

A block is never skipped silently: each document's test counts the blocks it ran and compares
the count with the blocks the document holds.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from simplex_protocols._private_files import pid_running

# slow: runs console scripts in subprocesses (about half a minute in all)
pytestmark = pytest.mark.slow

ROOT: Final = Path(__file__).resolve().parents[1]
DOCUMENTS: Final = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_LANGUAGES: Final = frozenset({"sh", "bash", "console"})

#: The not-run markers each document holds; a new one is added here with the document's change.
NOT_RUN: Final = {
    "README.md": 3,
    "docs/conformance-caller.md": 1,
    "docs/conformance-live.md": 4,
    "docs/declarations.md": 1,
    "docs/discovery.md": 1,
    "docs/run-an-agent.md": 5,
    "docs/simplex-bridge.md": 1,
    "docs/simplex-call.md": 1,
}

#: README.md's first block: the two commands of a clone of the repository.
REPOSITORY_COMMANDS: Final = ("make demo ", "make test ")

#: The ports the documents' servers use, replaced by free ones in each run.
DOCUMENTED_PORTS: Final = (5225, 5227, 8080)

BLOCK_TIMEOUT_S: Final = 180.0
READY_TIMEOUT_S: Final = 120.0
STOP_TIMEOUT_S: Final = 15.0

_FENCE: Final = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)[ \t]*$")
_MARKER: Final = re.compile(r"^[ \t]*<!-- not run: (?P<reason>\S.*?) -->[ \t]*$")
_ANY_MARKER: Final = re.compile(r"<!--\s*not\s+run", re.IGNORECASE)
_SHELL_FENCE: Final = re.compile(r"^[ \t]*```(?:sh|bash|console)[ \t]*$", re.MULTILINE)
_BACKGROUND_PORT: Final = re.compile(r"(?:--port[ =]|127\.0\.0\.1:|localhost:)(\d{2,5})\b")


@dataclass(frozen=True)
class Block:
    """One fenced shell block of a document."""

    document: str
    line: int  # of the opening fence, from 1
    language: str
    text: str  # the block's lines, without the fence's indentation
    not_run: str | None  # the marker's reason

    @property
    def script(self) -> str:
        """What runs: the whole block, or a console block's ``$`` commands."""
        if self.language != "console":
            return self.text
        commands: list[str] = []
        continued = False
        for line in self.text.splitlines():
            if continued:
                commands[-1] += "\n" + line
            elif line.startswith("$ "):
                commands.append(line[2:])
            else:
                continue
            continued = line.endswith("\\")
        return "\n".join(commands) + "\n"


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def shell_blocks(path: Path) -> list[Block]:
    """The shell blocks of a document, in order, each with its not-run reason if marked."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if fence is None:
            index += 1
            continue
        indent, language = fence["indent"], fence["lang"]
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if language in SHELL_LANGUAGES:
            body = [line[len(indent) :] if line.startswith(indent) else line for line in lines]
            marker = _MARKER.match(lines[index - 1]) if index > 0 else None
            blocks.append(
                Block(
                    _relative(path),
                    index + 1,
                    language,
                    "\n".join(body[index + 1 : end]) + "\n",
                    marker["reason"] if marker is not None else None,
                )
            )
        index = end + 1
    return blocks


def _is_repository_block(block: Block) -> bool:
    return block.document == "README.md" and block.line == 1


def runnable(blocks: list[Block]) -> list[Block]:
    return [b for b in blocks if b.not_run is None and not _is_repository_block(b)]


DOCUMENTS_WITH_BLOCKS: Final = [p for p in DOCUMENTS if runnable(shell_blocks(p))]


# ---------------------------------------------------------------------------- the rules


def test_every_not_run_marker_has_a_reason_and_marks_a_shell_block() -> None:
    wrong: list[str] = []
    for path in DOCUMENTS:
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            if _ANY_MARKER.search(line) is None:
                continue
            following = lines[number] if number < len(lines) else ""
            fence = _FENCE.match(following)
            if _MARKER.match(line) is None:
                wrong.append(f"{_relative(path)}:{number}: not `<!-- not run: REASON -->`")
            elif fence is None or fence["lang"] not in SHELL_LANGUAGES:
                wrong.append(f"{_relative(path)}:{number}: the next line opens no shell block")
    assert wrong == []


def test_the_not_run_blocks_are_the_recorded_few() -> None:
    counted = {
        _relative(p): n
        for p in DOCUMENTS
        if (n := sum(b.not_run is not None for b in shell_blocks(p)))
    }
    assert counted == NOT_RUN


def test_the_readme_starts_with_the_repository_block_only() -> None:
    first = shell_blocks(ROOT / "README.md")[0]
    assert _is_repository_block(first)
    lines = first.text.splitlines()
    assert len(lines) == len(REPOSITORY_COMMANDS)
    assert all(line.startswith(c) for line, c in zip(lines, REPOSITORY_COMMANDS, strict=True))


def test_the_reader_finds_every_shell_block() -> None:
    # Two readings of the same documents: the block reader and a plain search for the fences.
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        assert len(shell_blocks(path)) == len(_SHELL_FENCE.findall(text)), _relative(path)


def test_console_blocks_run_their_dollar_lines_only() -> None:
    block = Block("x.md", 1, "console", "$ echo a \\\n  b\na b\n$ true\noutput\n", None)
    assert block.script == "echo a \\\n  b\ntrue\n"


# ---------------------------------------------------------------------------- running


class DocumentRun:
    """The blocks of one document, run in order in one folder, as one terminal would."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.home = folder / "home"
        self.home.mkdir()
        self.state = folder / "shell-state"
        self.logs: list[Path] = []
        self.groups: list[int] = []
        self.ports = {port: _free_port() for port in DOCUMENTED_PORTS}
        self.ran = 0
        bin_dir = Path(sys.executable).parent
        self.env = {
            "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
            "TERM": "dumb",
            "DOCS_TEST_STATE": str(self.state),
        }

    def substitute(self, script: str) -> str:
        for documented, free in self.ports.items():
            script = re.sub(rf"(?<!\d){documented}(?!\d)", str(free), script)
        return script

    def run(self, block: Block) -> None:
        script = self.substitute(block.script)
        log = self.folder / f"block-{block.line}.log"
        self.logs.append(log)
        wrapped = (
            'if [ -f "$DOCS_TEST_STATE.env" ]; then . "$DOCS_TEST_STATE.env"; '
            'cd "$(cat "$DOCS_TEST_STATE.cwd")"; else cd "$HOME"; fi\n'
            f"{script}\n"
            'export -p > "$DOCS_TEST_STATE.env"; pwd > "$DOCS_TEST_STATE.cwd"; '
            'jobs -p > "$DOCS_TEST_STATE.jobs"\n'
        )
        with log.open("wb") as out:
            proc = subprocess.Popen(
                ["bash", "-e", "-o", "pipefail", "-c", wrapped],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )
            self.groups.append(proc.pid)
            try:
                status = proc.wait(timeout=BLOCK_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                pytest.fail(
                    f"{block.document}:{block.line}: still running after "
                    f"{BLOCK_TIMEOUT_S:.0f} s\n{self.tail()}"
                )
        if status != 0:
            missing = " (a command was not found)" if status == 127 else ""
            pytest.fail(
                f"{block.document}:{block.line}: exit status {status}{missing}\n{self.tail()}"
            )
        self._wait_for_background(block, script)
        self.ran += 1

    def _wait_for_background(self, block: Block, script: str) -> None:
        # a command continued over several lines (a trailing backslash) is one line here
        commands = script.replace("\\\n", " ").splitlines()
        lines = [line for line in commands if line.rstrip().endswith("&")]
        ports = {int(p) for line in lines for p in _BACKGROUND_PORT.findall(line)}
        jobs_file = Path(f"{self.state}.jobs")
        pids = [int(p) for p in jobs_file.read_text().split()] if jobs_file.exists() else []
        deadline = time.monotonic() + READY_TIMEOUT_S
        for port in sorted(ports):
            while not _accepts(port):
                if pids and not any(_alive(pid) for pid in pids):
                    pytest.fail(
                        f"{block.document}:{block.line}: the background command ended before "
                        f"port {port} accepted connections\n{self.tail()}"
                    )
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"{block.document}:{block.line}: port {port} not accepting after "
                        f"{READY_TIMEOUT_S:.0f} s\n{self.tail()}"
                    )
                time.sleep(0.1)

    def tail(self) -> str:
        parts = []
        for log in self.logs[-3:]:
            text = log.read_text(encoding="utf-8", errors="replace")
            parts.append(f"--- {log.name}\n{text[-3000:]}")
        return "\n".join(parts)

    def stop(self) -> None:
        for group in self.groups:
            _signal_group(group, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline and any(_group_alive(g) for g in self.groups):
            time.sleep(0.1)
        for group in self.groups:
            _signal_group(group, signal.SIGKILL)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _alive(pid: int) -> bool:
    if not pid_running(pid):
        return False
    # a zombie (its parent, the block's shell, is gone) is not running any more
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _signal_group(group: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


# A document runs for up to a minute on a busy machine: longer than the default timeout.
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "path", DOCUMENTS_WITH_BLOCKS, ids=[_relative(p) for p in DOCUMENTS_WITH_BLOCKS]
)
def test_the_shell_blocks_run_as_shown(path: Path, tmp_path: Path) -> None:
    blocks = runnable(shell_blocks(path))
    held = len(_SHELL_FENCE.findall(path.read_text(encoding="utf-8")))
    held -= NOT_RUN.get(_relative(path), 0) + (path.name == "README.md")
    run = DocumentRun(tmp_path)
    try:
        for block in blocks:
            run.run(block)
    finally:
        run.stop()
    assert run.ran == held == len(blocks)
