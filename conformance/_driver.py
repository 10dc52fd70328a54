"""The vector driver protocol: how the suite talks to an implementation's codecs.

An implementation under test is a program that reads one JSON object per line on stdin and
writes one JSON object per line on stdout (``conformance/README.md`` documents the protocol).
The suite first sends a *hello* and reads the driver's hello back (its name, version and the
operations it supports), then one *request* per vector case, each answered by one line.

This module holds both ends the suite can talk to:

- :class:`DriverProcess`: another program, started with a command line; a line that does not
  come back in time, a driver that exits or prints something that is not a JSON object is a
  :class:`DriverFailure`, after which the process is killed and started again;
- :class:`InProcessImplementation`: our own library through ``simplex_protocols.conformance.ops``, with the same
  requests and answers, so both paths share one runner and one transcript format.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import shlex
import subprocess
import threading
import time
import traceback
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import IO, Any, Final, Protocol

__all__ = [
    "DEFAULT_LINE_TIMEOUT_S",
    "MAX_ANSWER_DEPTH",
    "PROTOCOL",
    "DriverFailure",
    "DriverProcess",
    "Hello",
    "Implementation",
    "InProcessImplementation",
    "decode_answer",
    "encode_line",
]

#: The protocol name both hellos carry; a later incompatible protocol gets a new number.
PROTOCOL: Final = "simplex-conformance/vectors/1"

#: How long the suite waits for one answer line, in seconds, unless told otherwise.
DEFAULT_LINE_TIMEOUT_S: Final = 10.0

#: How long a driver gets for its hello (it may load a runtime first).
HELLO_TIMEOUT_S: Final = 30.0

#: The longest answer line the suite reads (16 MiB); a longer one is garbage.
MAX_LINE_BYTES: Final = 16 * 1024 * 1024

#: How much of a driver's stderr is kept for error details.
STDERR_TAIL_LINES: Final = 20

#: The deepest nesting of arrays and objects an answer may have; a deeper one is garbage, so
#: that judging and writing reports never runs out of stack.
MAX_ANSWER_DEPTH: Final = 512

#: Integers with more digits than this are kept as :class:`~decimal.Decimal` (Python refuses
#: to convert longer digit strings to ``int``).
_MAX_INT_DIGITS: Final = 4000


def encode_line(value: Any) -> str:
    """One protocol line: compact JSON, every non-ASCII character escaped.

    ASCII-only lines carry any string, lone surrogates included, through every runtime's
    line reader unchanged; this is not wire JSON, so it does not go through the library's
    wire encoder.
    """
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)  # noqa: TID251


@dataclass(frozen=True, slots=True)
class Hello:
    """What an implementation said about itself.

    Attributes:
        implementation: free-form facts (``name``, ``version``, ``language``...), for reports.
        operations: the operations it supports; ``None`` when it did not say (all of them).
    """

    implementation: Mapping[str, Any]
    operations: frozenset[str] | None

    def supports(self, operation: str) -> bool:
        """Whether requests of ``operation`` go to the implementation."""
        return self.operations is None or operation in self.operations


class DriverFailure(Exception):
    """A driver did not answer a line as the protocol says.

    Attributes:
        kind: ``timeout`` (no line in time), ``exited`` (the process ended), ``garbage`` (the
            line is not a JSON object), ``protocol`` (a JSON object of the wrong shape),
            ``start`` (the process could not be started).
        detail: what happened, with the tail of the driver's stderr when there is one.
        restart: whether the process must be restarted before the next request.
    """

    def __init__(self, kind: str, detail: str, *, restart: bool) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.restart = restart


class Implementation(Protocol):
    """An implementation the vector runner can ask (see the module docstring)."""

    #: One line for reports: the command, or ``in-process``.
    description: str

    def start(self) -> Hello:
        """Start (or restart) and exchange hellos.

        Raises:
            DriverFailure: the implementation could not be started or did not say hello.
        """
        ...

    def call(self, request: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request and return the answer object as read.

        Raises:
            DriverFailure: no well-formed answer; ``restart`` says whether to start again.
        """
        ...

    def reproduce(self, request: Mapping[str, Any]) -> str:
        """A shell command line that sends this request alone and prints the answer."""
        ...

    def close(self) -> None:
        """Stop the implementation; calling it twice is harmless."""
        ...


def hello_request(operations: Sequence[str], suite_version: str) -> dict[str, Any]:
    """The suite's hello line."""
    return {"hello": PROTOCOL, "suite": suite_version, "operations": sorted(operations)}


def reproduce_line(request: Mapping[str, Any], suite_version: str, command: str) -> str:
    """A shell line that sends one request, after a hello naming its operation alone, to
    ``command``."""
    hello = encode_line(hello_request([str(request["op"])], suite_version))
    return f"printf '%s\\n' {shlex.quote(hello)} {shlex.quote(encode_line(request))} | {command}"


def parse_hello(answer: Any) -> Hello:
    """Read a driver's hello answer.

    Raises:
        DriverFailure: (``protocol``) not a hello of this protocol.
    """
    if not isinstance(answer, dict) or answer.get("hello") != PROTOCOL:
        raise DriverFailure(
            "protocol",
            f"the first line must be a hello of {PROTOCOL!r}, got {_excerpt(answer)}",
            restart=True,
        )
    ops = answer.get("operations")
    if ops is not None and (not isinstance(ops, list) or not all(isinstance(o, str) for o in ops)):
        raise DriverFailure(
            "protocol", "hello.operations must be a list of operation names", restart=True
        )
    info = answer.get("implementation", {})
    if not isinstance(info, dict):
        raise DriverFailure("protocol", "hello.implementation must be an object", restart=True)
    return Hello(implementation=info, operations=None if ops is None else frozenset(ops))


class _NotJSON(ValueError):
    """A line that JSON does not allow (``NaN``, ``Infinity``) or nests too deeply."""


def _refuse_constant(token: str) -> Any:
    raise _NotJSON(f"{token} is not a JSON value")


def _parse_int(text: str) -> int | Decimal:
    return int(text) if len(text) <= _MAX_INT_DIGITS else Decimal(text)


def _parse_float(text: str) -> float | Decimal:
    # A number beyond a double's range (1e400) is still a JSON number: kept exactly, never
    # turned into an infinity that no JSON writer can write back.
    value = float(text)
    return value if value not in (float("inf"), float("-inf")) else Decimal(text)


def _depth(value: Any) -> int:
    """The nesting depth of a decoded JSON value (iterative: any depth is safe)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def decode_answer(raw: bytes) -> Any:
    """Decode one answer line as strict JSON.

    Numbers are kept exactly: integers of any length, and numbers beyond a double's range, as
    :class:`~decimal.Decimal` when Python's own types cannot hold them.

    Raises:
        ValueError: the line is not UTF-8, not JSON (``NaN`` and ``Infinity`` included), or
            nested deeper than :data:`MAX_ANSWER_DEPTH`.
    """
    try:
        value = json.loads(
            raw.decode("utf-8"),
            parse_constant=_refuse_constant,
            parse_int=_parse_int,
            parse_float=_parse_float,
        )
    except RecursionError:
        raise _NotJSON(f"nested deeper than {MAX_ANSWER_DEPTH} levels") from None
    if _depth(value) > MAX_ANSWER_DEPTH:
        raise _NotJSON(f"nested deeper than {MAX_ANSWER_DEPTH} levels")
    return value


def _excerpt(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(slots=True)
class _Pipes:
    process: subprocess.Popen[bytes]
    lines: queue.Queue[bytes | None]
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_TAIL_LINES))


class DriverProcess:
    """Another implementation's driver, run as a child process (no shell).

    Args:
        command: the command line, split with :func:`shlex.split`.
        operations: every operation the suite may send (for the hello).
        suite_version: the suite's version (for the hello).
        env: the environment of the process (default: this process's environment).
        cwd: its working directory (default: the current one).
    """

    def __init__(
        self,
        command: str,
        *,
        operations: Sequence[str],
        suite_version: str,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        self.command = command
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("the driver command is empty")
        self.description = command
        self._suite_version = suite_version
        self._hello_line = encode_line(hello_request(operations, suite_version))
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self._pipes: _Pipes | None = None
        self.starts = 0

    # ------------------------------------------------------------------ process handling

    def _spawn(self) -> _Pipes:
        try:
            process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env,
                cwd=self._cwd,
            )
        except OSError as exc:
            raise DriverFailure(
                "start", f"cannot start {self.argv[0]!r}: {exc.strerror or exc}", restart=False
            ) from exc
        pipes = _Pipes(process=process, lines=queue.Queue())
        assert process.stdout is not None and process.stderr is not None
        threading.Thread(
            target=_pump_lines, args=(process.stdout, pipes.lines), daemon=True
        ).start()
        threading.Thread(
            target=_pump_stderr, args=(process.stderr, pipes.stderr_tail), daemon=True
        ).start()
        self.starts += 1
        return pipes

    def start(self) -> Hello:
        """Start the process (killing a previous one) and exchange hellos."""
        self.close()
        self._pipes = self._spawn()
        try:
            self._send(self._hello_line)
            answer = self._read(HELLO_TIMEOUT_S)
        except DriverFailure as exc:
            self.close()
            raise DriverFailure(exc.kind, f"during the hello: {exc.detail}", restart=True) from exc
        try:
            return parse_hello(answer)
        except DriverFailure:
            self.close()
            raise

    def close(self) -> None:
        """Close stdin, give the process a moment to exit, then kill it."""
        pipes, self._pipes = self._pipes, None
        if pipes is None:
            return
        process = pipes.process
        try:
            if process.stdin is not None and not process.stdin.closed:
                process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()

    # ------------------------------------------------------------------ lines

    def _stderr(self) -> str:
        if self._pipes is None or not self._pipes.stderr_tail:
            return ""
        return " (driver stderr: " + " | ".join(self._pipes.stderr_tail) + ")"

    def _send(self, line: str) -> None:
        pipes = self._pipes
        assert pipes is not None
        stdin = pipes.process.stdin
        assert stdin is not None
        try:
            stdin.write(line.encode("ascii") + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise DriverFailure(
                "exited", f"the driver closed its input ({exc}){self._stderr()}", restart=True
            ) from exc

    def _read(self, timeout_s: float) -> Any:
        pipes = self._pipes
        assert pipes is not None
        try:
            raw = pipes.lines.get(timeout=timeout_s)
        except queue.Empty:
            raise DriverFailure(
                "timeout", f"no answer within {timeout_s:g} s{self._stderr()}", restart=True
            ) from None
        if raw is None:
            code = pipes.process.poll()
            if code is None:
                try:
                    code = pipes.process.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    code = None
            status = "" if code is None else f" with status {code}"
            raise DriverFailure(
                "exited",
                f"the driver exited{status} before answering{self._stderr()}",
                restart=True,
            )
        if len(raw) > MAX_LINE_BYTES:
            raise DriverFailure(
                "garbage", f"an answer line of {len(raw)} bytes is too long", restart=True
            )
        try:
            value = decode_answer(raw)
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "backslashreplace").rstrip("\r\n")
            raise DriverFailure(
                "garbage", f"not a UTF-8 line: {_excerpt(text)!r}{self._stderr()}", restart=True
            ) from None
        except ValueError as exc:
            text = raw.decode("utf-8", "backslashreplace").rstrip("\r\n")
            why = f" ({exc})" if isinstance(exc, _NotJSON) else ""
            raise DriverFailure(
                "garbage",
                f"not a JSON line{why}: {_excerpt(text)!r}{self._stderr()}",
                restart=True,
            ) from None
        if not isinstance(value, dict):
            raise DriverFailure("garbage", f"not a JSON object: {_excerpt(value)}", restart=True)
        return value

    def call(self, request: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request line and read its answer line."""
        if self._pipes is None:
            raise DriverFailure("exited", "the driver is not running", restart=True)
        self._send(encode_line(request))
        answer: dict[str, Any] = self._read(timeout_s)
        return answer

    def reproduce(self, request: Mapping[str, Any]) -> str:
        """``printf '%s\\n' HELLO REQUEST | COMMAND``, the hello naming only the request's
        operation (a driver answers a hello the same whatever it lists)."""
        return reproduce_line(request, self._suite_version, self.command)


def _pump_lines(stream: IO[bytes], lines: queue.Queue[bytes | None]) -> None:
    try:
        for raw in iter(stream.readline, b""):
            lines.put(raw)
    except (OSError, ValueError):
        pass
    finally:
        lines.put(None)


def _pump_stderr(stream: IO[bytes], tail: deque[str]) -> None:
    try:
        for raw in iter(stream.readline, b""):
            text = raw.decode("utf-8", "backslashreplace").rstrip()
            if text:
                tail.append(text[:300])
    except (OSError, ValueError):
        pass


class InProcessImplementation:
    """Our own library, answering the same requests through ``simplex_protocols.conformance.ops``.

    An exception that is not one of the library's typed errors becomes an ``exception``
    answer (a crash of the implementation, reported as ``ERROR``).
    """

    description = "in-process (simplex_protocols)"

    def __init__(self) -> None:
        from simplex_protocols.conformance.ops import load_all

        self._ops = load_all()

    def start(self) -> Hello:
        """Nothing to start; the hello lists every registered operation."""
        from simplex_protocols import __version__

        return Hello(
            implementation={
                "name": "simplex-protocols",
                "version": __version__,
                "language": "python",
                "mode": "in-process",
            },
            operations=frozenset(self._ops),
        )

    def call(self, request: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
        """Run the request's operation; ``timeout_s`` is not enforced in process."""
        from simplex_protocols.conformance.ops import run_op

        value = (
            base64.b64decode(request["input_b64"])
            if "input_b64" in request
            else request.get("input")
        )
        try:
            return run_op(request["op"], value, request.get("args"))
        except Exception as exc:
            frames = traceback.format_exception_only(type(exc), exc)
            return {"exception": "".join(frames).strip()}

    def reproduce(self, request: Mapping[str, Any]) -> str:
        """The example driver, fed this one request."""
        from ._provenance import suite_version

        return reproduce_line(
            request, suite_version(), "python conformance/examples/python_driver.py"
        )

    def close(self) -> None:
        """Nothing to stop."""


def monotonic() -> float:
    """The clock used for durations (a separate name so tests can see what is measured)."""
    return time.perf_counter()


def default_env() -> dict[str, str]:
    """The environment drivers get: ours, with Python's output unbuffered."""
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env
