"""Provenance: what a report was measured with, so two reports can be compared honestly.

Every report carries the suite's version, the requirement set (revision and SHA-256 of
``spec/requirements.json``), the vectors' hash, the core backend, the SDK versions, the seed,
the clock mode and the start and end times. Targets are redacted: a SimpleX link carries keys,
and reports are shared.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import platform
import re
from collections.abc import Mapping
from importlib import metadata
from typing import Any, Final

__all__ = [
    "SDK_DISTRIBUTIONS",
    "provenance",
    "redact",
    "requirements_digest",
    "sdk_versions",
    "suite_version",
    "utc_now",
]

#: The distributions whose versions every report lists.
SDK_DISTRIBUTIONS: Final = ("simplex-protocols", "mcp", "a2a-sdk", "simplex-chat")

_LINK = re.compile(r"(?i)\b(?:https?|simplex)://[^\s'\"]+|\bsimplex:/[^\s'\"]+")


def suite_version() -> str:
    """The suite's version (the version of the simplex-protocols distribution)."""
    from simplex_protocols import __version__

    return __version__


def sdk_versions() -> dict[str, str | None]:
    """Installed versions of :data:`SDK_DISTRIBUTIONS` (``None`` when not installed) and Python."""
    out: dict[str, str | None] = {}
    for name in SDK_DISTRIBUTIONS:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["python"] = platform.python_version()
    return out


def requirements_digest() -> dict[str, Any]:
    """The requirement set: revision, SHA-256 of the file's bytes, number of entries."""
    from simplex_protocols._spec import load_json, spec_path

    raw = spec_path("requirements.json").read_bytes()
    index = load_json("requirements.json")
    return {
        "revision": index.get("spec_revision"),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "count": len(index["requirements"]),
    }


def redact(text: str | None) -> str | None:
    """A link or command line with every link shortened to its host and a hash.

    ``https://smp12.simplex.im/a#KEY`` → ``https://smp12.simplex.im/…#sha256:1a2b3c4d5e6f``:
    enough to tell two targets apart, not enough to connect.
    """
    if text is None:
        return None

    def one(match: re.Match[str]) -> str:
        link = match.group(0)
        digest = hashlib.sha256(link.encode("utf-8")).hexdigest()[:12]
        head = re.match(r"(?i)^((?:https?|simplex)://[^/#?\s]*|simplex:/)", link)
        prefix = head.group(1) if head else link[:8]
        return f"{prefix}/…#sha256:{digest}"

    return _LINK.sub(one, text)


def utc_now() -> dt.datetime:
    """The current time, UTC, to the second (reports' start and end times)."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def provenance(
    *,
    command: str,
    started: dt.datetime,
    ended: dt.datetime,
    seed: int | None,
    clock: str,
    core: str | None,
    target: str | None = None,
    implementation: Mapping[str, Any] | None = None,
    vectors_sha256: str | None = None,
    argv: list[str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance block of a report.

    Args:
        command: ``vectors``, ``bot``, ``caller`` or ``selftest``.
        started: when the run started (UTC).
        ended: when it ended (UTC).
        seed: the run's seed (``None`` when nothing random happens).
        clock: ``manual`` or ``system``.
        core: the core backend (``sim``, ``ws://…``, ``lib``), or ``None`` when no core is used.
        target: the target as given (redacted here).
        implementation: what the implementation said about itself (vector driver hello).
        vectors_sha256: the hash of the vectors used, when vectors ran.
        argv: the command line (links redacted).
        extra: further facts for this command.
    """
    out: dict[str, Any] = {
        "suite": {"name": "simplex-conformance", "version": suite_version()},
        "command": command,
        "requirements": requirements_digest(),
        "vectors_sha256": vectors_sha256,
        "core": core,
        "target": redact(target),
        "implementation": dict(implementation) if implementation is not None else None,
        "sdks": sdk_versions(),
        "seed": seed,
        "clock": clock,
        "started_at": started.isoformat().replace("+00:00", "Z"),
        "ended_at": ended.isoformat().replace("+00:00", "Z"),
        "platform": platform.platform(terse=True),
        "argv": [redact(a) or "" for a in argv] if argv is not None else None,
    }
    if extra:
        out.update(extra)
    return out
