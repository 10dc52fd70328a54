"""``simplex-call doctor``: the core's version and capabilities, on every core profile.

In process against each profile of the simulated network, and end to end as the README tells a
user to run it: ``simplex-sim serve --core-profile v6.4`` and ``simplex-call doctor --core
ws://127.0.0.1:PORT/u`` as two processes.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from cli_kit import cli, environ

from simplex_protocols._clock import ManualClock
from simplex_protocols.core import Capability
from simplex_protocols.sim import CORE_PROFILES, SimNetwork

pytestmark = pytest.mark.anyio

#: What doctor reports missing on each profile.
MISSING = {
    "spec": set(),
    "v7.0": {
        "service-request-send",
        "protocols-preference",
        "group-protocols-preference",
        "address-serves",
        "prepared-chats",
    },
    "v6.4": {
        "service-requests",
        "service-request-send",
        "protocols-preference",
        "group-protocols-preference",
        "address-serves",
        "address-pq-ratchet",
        "custom-data",
        "prepared-chats",
        "simplex-names",
        "signed-messages",
        "group-invitations",
    },
}


@pytest.mark.parametrize("profile", sorted(MISSING))
async def test_doctor_reports_exactly_what_the_profile_lacks(tmp_path: Path, profile: str) -> None:
    network = SimNetwork(seed=2, clock=ManualClock(), core_profile=profile)
    result = await cli(network, ["doctor", "--json"], environ(tmp_path))
    out = result.json()
    assert result.status == (66 if MISSING[profile] else 0), result.err
    assert out["core"]["version"] == CORE_PROFILES[profile].version.version
    names = [c["name"] for c in out["capabilities"]]
    assert names == [str(c) for c in Capability]
    assert {c["name"] for c in out["capabilities"] if c["status"] == "missing"} == MISSING[profile]
    assert {c["status"] for c in out["capabilities"]} <= {"ok", "missing"}
    for entry in out["capabilities"]:
        assert entry["affects"] == Capability(entry["name"]).affects
    assert out["exitCode"] == result.status and out["ok"] is (result.status == 0)


async def test_doctor_prints_one_line_per_capability(tmp_path: Path) -> None:
    network = SimNetwork(seed=2, clock=ManualClock(), core_profile="v6.4")
    result = await cli(network, ["doctor"], environ(tmp_path))
    assert result.status == 66
    lines = result.out.splitlines()
    assert lines[0] == "chat core sim:you, version 6.4.0"
    rows = lines[1 : 1 + len(Capability)]
    for capability, row in zip(Capability, rows, strict=True):
        status, name = row.split()[:2]
        assert name == capability
        assert status == ("missing" if str(capability) in MISSING["v6.4"] else "ok")
        text = capability.affects if status == "missing" else capability.uses
        assert row.endswith(text)
    assert lines[-1].startswith("11 of 14 capabilities missing: service-requests, ")
    assert "created simplex-call's SimpleX user" in result.err


async def test_doctor_on_the_newest_core_finds_nothing_missing(tmp_path: Path) -> None:
    network = SimNetwork(seed=2, clock=ManualClock())
    result = await cli(network, ["doctor"], environ(tmp_path))
    assert result.status == 0, result.err
    assert result.out.splitlines()[-1] == "no capability is missing (14 probed)"


async def _serve(profile: str | None) -> tuple[anyio.abc.Process, int]:
    script = os.path.join(os.path.dirname(sys.executable), "simplex-sim")
    args = [script, "serve", "--port", "0"]
    if profile is not None:
        args += ["--core-profile", profile]
    proc = await anyio.open_process(args)
    assert proc.stdout is not None
    buffer = b""
    with anyio.fail_after(20):
        while b"\n" not in buffer:
            buffer += await proc.stdout.receive()
    first = buffer.split(b"\n", 1)[0].decode()
    return proc, int(first.rsplit(":", 1)[1])


async def _doctor(port: int, tmp_path: Path) -> tuple[int, str]:
    script = os.path.join(os.path.dirname(sys.executable), "simplex-call")
    with anyio.fail_after(30):
        done = await anyio.run_process(
            [script, "doctor", "--core", f"ws://127.0.0.1:{port}/u"],
            env={**os.environ, **environ(tmp_path)},
            check=False,
        )
    return done.returncode, done.stdout.decode()


@pytest.mark.slow
@pytest.mark.parametrize(("profile", "status"), [("v6.4", 66), (None, 0)])
async def test_doctor_against_simplex_sim_serve(
    tmp_path: Path, profile: str | None, status: int
) -> None:
    proc, port = await _serve(profile)
    try:
        code, out = await _doctor(port, tmp_path)
    finally:
        proc.send_signal(signal.SIGTERM)
        with anyio.fail_after(20):
            await proc.wait()
    assert code == status, out
    rows = {line.split()[1]: line.split()[0] for line in out.splitlines()[1:-1] if line}
    if profile == "v6.4":
        assert rows["service-requests"] == "missing"
        assert rows["protocols-preference"] == "missing"
    else:
        assert set(rows.values()) == {"ok"}
