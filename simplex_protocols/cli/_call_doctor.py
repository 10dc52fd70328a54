"""``simplex-call doctor``: what the chat core can do, before first use.

The core is probed (:func:`simplex_protocols.core.probe_core`) as simplex-call's own user, the
one every other command uses, and each capability is shown with what a core without it costs:

.. code-block:: text

    chat core ws://127.0.0.1:5225, version 6.4.0
    missing  service-requests            no Service RPC responder: a bot answers in ...
    ok       short-links                 /_short_link_address (address short links ...)
    ...
    10 of 14 capabilities missing: service-requests, ...

The exit status is 0 when no capability is missing, 66 (not supported) when one is.
"""

from __future__ import annotations

import argparse
from typing import Any

from simplex_protocols.core import CapabilityStatus, CoreCapabilities, probe_core

from ._call_args import ExitCode
from ._call_console import Console
from ._call_session import Environment, open_session

__all__ = ["doctor_lines", "run_doctor"]

_WIDTH = max(len("group-protocols-preference"), 26)


async def run_doctor(options: argparse.Namespace, console: Console, env: Environment) -> int:
    """``simplex-call doctor``: probe the core and show each capability.

    Returns:
        0 when no capability is missing, 66 when one is.
    """
    async with open_session(options.core, env) as session:
        if session.created_user:
            console.note(
                f"created simplex-call's SimpleX user (ID {session.user_id}) in {session.option}"
            )
        async with console.step("probing the chat core"):
            caps = await probe_core(session.api, user_id=session.user_id)
        where = session.core.description
    exit_code = ExitCode.NOT_SUPPORTED if caps.missing else ExitCode.OK
    if console.json_mode:
        out: dict[str, Any] = {
            "ok": exit_code is ExitCode.OK,
            "exitCode": int(exit_code),
            "status": exit_code.slug,
            **caps.to_json(),
        }
        out["core"]["description"] = where
        out["notes"] = list(console.notes)
        console.json(out)
    else:
        for line in doctor_lines(caps, where):
            console.line(line)
    return int(exit_code)


def doctor_lines(caps: CoreCapabilities, where: str) -> list[str]:
    """The readable report: the core, one line per capability, and a summary."""
    version = caps.version or "unknown (it did not answer /version)"
    lines = [f"chat core {where}, version {version}"]
    for result in caps.results:
        text = (
            result.capability.uses
            if result.status is CapabilityStatus.OK
            else result.capability.affects
        )
        lines.append(f"{result.status:<8} {result.capability:<{_WIDTH}}  {text}")
    total = len(caps.results)
    if caps.missing:
        names = ", ".join(caps.missing)
        lines.append(f"{len(caps.missing)} of {total} capabilities missing: {names}")
    else:
        lines.append(f"no capability is missing ({total} probed)")
    if caps.unknown:
        names = ", ".join(caps.unknown)
        lines.append(f"could not tell: {names} (see `simplex-call doctor --json` for why)")
    return lines
