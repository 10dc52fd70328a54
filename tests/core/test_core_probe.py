"""The capability probe against a scripted core: what it sends, how it reads the answers.

The test plays the core (``FakeBackend``): it answers the probe's commands as a core that has,
or lacks, each form, and that keeps or drops scratch values. The probe must tell ``ok`` from
``missing`` from ``unknown``, undo every scratch value, and ask a core only once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from core_fakes import FakeBackend

from simplex_protocols.core import (
    Capability,
    CapabilityStatus,
    ChatAPI,
    ChatCore,
    _probe,
    probe_core,
)

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
NOBODY = "999999999999999"

USER: JSON = {
    "userId": 1,
    "localDisplayName": "me",
    "profile": {"profileId": 1, "displayName": "me", "fullName": "", "localAlias": ""},
}


def _command_error(message: str = "Failed reading: empty") -> JSON:
    return {
        "type": "chatCmdError",
        "chatError": {"type": "error", "errorType": {"type": "commandError", "message": message}},
    }


def _store_error(tag: str) -> JSON:
    return {
        "type": "chatCmdError",
        "chatError": {"type": "errorStore", "storeError": {"type": tag}},
    }


class ScriptedCore:
    """A core for the probe: ``refuses`` are regexes of command forms it does not parse;
    ``drops`` the keys its records drop; ``address`` its user's address settings."""

    def __init__(
        self,
        *,
        refuses: tuple[str, ...] = (),
        drops: frozenset[str] = frozenset(),
        address: JSON | None = None,
        user: JSON | None = USER,
        version: str | None = "7.1.0.14",
    ) -> None:
        self.refuses = [re.compile(r) for r in refuses]
        self.drops = drops
        self.address = address
        self.user = user
        self.version = version
        self.commands: list[str] = []
        self.silent: tuple[str, ...] = ()

    def respond(self, cmd: str) -> JSON | None:
        self.commands.append(cmd)
        if cmd.startswith(self.silent):
            return None
        if any(r.search(cmd) for r in self.refuses):
            return _command_error()
        if cmd == "/version":
            if self.version is None:
                return _command_error()
            return {"type": "versionInfo", "versionInfo": {"version": self.version}}
        if cmd == "/user":
            if self.user is None:
                return {
                    "type": "chatCmdError",
                    "chatError": {"type": "error", "errorType": {"type": "noActiveUser"}},
                }
            return {"type": "activeUser", "user": self.user}
        if NOBODY in cmd:
            return _store_error("userNotFound")
        if cmd.startswith("/_prepare contact 1 "):
            data = _json_tail(cmd)
            profile = dict(data["profile"])
            if "protocols" in self.drops:
                profile["preferences"] = {}
            contact = {"contactId": 42, "profile": profile}
            return {
                "type": "newPreparedChat",
                "chat": {"chatInfo": {"type": "direct", "contact": contact}},
            }
        if cmd.startswith("/_prepare group 1 "):
            group = dict(_json_tail(cmd)["groupProfile"])
            if "protocols" in self.drops:
                group["groupPreferences"] = {}
            info = {"groupId": 43, "groupProfile": group}
            return {
                "type": "newPreparedChat",
                "chat": {"chatInfo": {"type": "group", "groupInfo": info}},
            }
        if cmd.startswith("/_delete "):
            return {"type": "contactDeleted"}
        if cmd == "/_show_address 1":
            if self.address is None:
                return _store_error("userContactLinkNotFound")
            return {"type": "userContactLink", "contactLink": {"addressSettings": self.address}}
        if cmd == "/_address 1":
            self.address = {"businessAddress": False}
            return {"type": "userContactLinkCreated", "connLinkContact": {"connFullLink": "x"}}
        if cmd == "/_delete_address 1":
            self.address = None
            return {"type": "userContactLinkDeleted"}
        if cmd.startswith("/_address_settings 1 "):
            settings = _json_tail(cmd)
            if "serves" in self.drops:
                settings.pop("serves", None)
            self.address = settings
            return {"type": "userContactLinkUpdated", "contactLink": {"addressSettings": settings}}
        raise AssertionError(f"unexpected command {cmd!r}")


def _json_tail(cmd: str) -> JSON:
    import json

    value: JSON = json.loads(cmd[cmd.index("{") :])
    return value


async def _probe_with(core: ScriptedCore, **options: Any) -> Any:
    async with ChatCore(FakeBackend(responder=core.respond)) as chat:
        return await probe_core(ChatAPI(chat), **options)


async def test_a_core_that_parses_and_keeps_everything_has_every_capability() -> None:
    core = ScriptedCore()
    caps = await _probe_with(core)
    assert caps.version == "7.1.0.14"
    assert [r.capability for r in caps.results] == list(Capability)
    assert caps.missing == () and caps.unknown == ()
    assert all(caps.has(c) for c in Capability)


async def test_a_refused_form_is_missing_and_a_refused_control_is_unknown() -> None:
    core = ScriptedCore(refuses=(r"^/_service_response ", r" sign=on ", r"^/_send "))
    caps = await _probe_with(core)
    assert caps.status(Capability.SERVICE_REQUESTS) is CapabilityStatus.MISSING
    # the control (/_send without sign=) is refused too: the probe cannot tell
    assert caps.status(Capability.SIGNED_MESSAGES) is CapabilityStatus.UNKNOWN
    assert caps.status(Capability.LIVE_MESSAGES) is CapabilityStatus.UNKNOWN
    assert caps.missing == (Capability.SERVICE_REQUESTS,)
    assert "/_service_response" in caps.result(Capability.SERVICE_REQUESTS).evidence


async def test_an_option_refused_alone_is_missing() -> None:
    core = ScriptedCore(refuses=(r" pq_ratchet=on$", r" direct=off ", r"^/_connect plan \d+ @"))
    caps = await _probe_with(core)
    assert set(caps.missing) == {
        Capability.ADDRESS_PQ_RATCHET,
        Capability.PREPARED_CHATS,
        Capability.SIMPLEX_NAMES,
    }


async def test_signed_requests_are_part_of_sending_requests() -> None:
    core = ScriptedCore(refuses=(r" sign_key=",))
    caps = await _probe_with(core)
    assert caps.missing == (Capability.SERVICE_REQUEST_SEND,)
    assert "sign_key=" in caps.result(Capability.SERVICE_REQUEST_SEND).evidence


async def test_dropped_keys_are_missing_and_every_scratch_value_is_undone() -> None:
    core = ScriptedCore(drops=frozenset({"protocols", "serves"}))
    caps = await _probe_with(core)
    assert set(caps.missing) == {
        Capability.PROTOCOLS_PREFERENCE,
        Capability.GROUP_PROTOCOLS_PREFERENCE,
        Capability.ADDRESS_SERVES,
    }
    sent = core.commands
    # each scratch chat is deleted without telling anyone, the scratch address too
    assert "/_delete @42 full notify=off" in sent
    assert "/_delete #43 full notify=off" in sent
    assert sent.index("/_address 1") < sent.index("/_delete_address 1")
    assert core.address is None


async def test_an_address_is_restored_as_it_was() -> None:
    original = {"businessAddress": True, "autoAccept": {"acceptIncognito": False}}
    core = ScriptedCore(address=dict(original))
    caps = await _probe_with(core, capabilities=[Capability.ADDRESS_SERVES])
    assert caps.has(Capability.ADDRESS_SERVES)
    assert core.address == original
    settings = [c for c in core.commands if c.startswith("/_address_settings 1 ")]
    assert len(settings) == 2 and '"serves"' in settings[0] and '"serves"' not in settings[1]
    assert not any("pq_ratchet" in c for c in settings)


async def test_what_the_user_has_is_read_before_any_scratch_value() -> None:
    user = {**USER, "profile": {**USER["profile"], "preferences": {"protocols": {"mcp": {}}}}}
    core = ScriptedCore(user=user, address={"businessAddress": False, "serves": ["agent"]})
    caps = await _probe_with(
        core, capabilities=[Capability.PROTOCOLS_PREFERENCE, Capability.ADDRESS_SERVES]
    )
    assert caps.missing == () and caps.unknown == ()
    assert not [c for c in core.commands if c.startswith(("/_prepare", "/_address"))]


async def test_written_values_are_evidence_and_send_nothing() -> None:
    core = ScriptedCore()
    caps = await _probe_with(
        core,
        capabilities=[Capability.PROTOCOLS_PREFERENCE, Capability.ADDRESS_SERVES],
        user_id=1,
        written_profile={"displayName": "me", "preferences": {}},
        written_address_settings={"businessAddress": False, "serves": ["agent"]},
    )
    assert caps.missing == (Capability.PROTOCOLS_PREFERENCE,)
    assert caps.has(Capability.ADDRESS_SERVES)
    assert core.commands == ["/version"]


async def test_without_scratch_values_a_read_back_is_unknown_and_asked_again() -> None:
    core = ScriptedCore()
    async with ChatCore(FakeBackend(responder=core.respond)) as chat:
        api = ChatAPI(chat)
        first = await probe_core(api, [Capability.GROUP_PROTOCOLS_PREFERENCE], scratch=False)
        assert first.status(Capability.GROUP_PROTOCOLS_PREFERENCE) is CapabilityStatus.UNKNOWN
        assert not [c for c in core.commands if c.startswith("/_prepare")]
        second = await probe_core(api, [Capability.GROUP_PROTOCOLS_PREFERENCE])
        assert second.has(Capability.GROUP_PROTOCOLS_PREFERENCE)


async def test_a_core_is_asked_once_unless_refreshed() -> None:
    core = ScriptedCore()
    async with ChatCore(FakeBackend(responder=core.respond)) as chat:
        api = ChatAPI(chat)
        first = await probe_core(api)
        asked = len(core.commands)
        again = await probe_core(chat)  # a ChatCore does as well as its ChatAPI
        assert again == first and len(core.commands) == asked
        subset = await probe_core(api, [Capability.CUSTOM_DATA])
        assert [r.capability for r in subset.results] == [Capability.CUSTOM_DATA]
        assert len(core.commands) == asked
        core.refuses = [re.compile(r"^/_set custom ")]
        refreshed = await probe_core(api, [Capability.CUSTOM_DATA], refresh=True)
        assert refreshed.missing == (Capability.CUSTOM_DATA,)


async def test_a_core_that_does_not_answer_gives_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_probe, "_PROBE_TIMEOUT_S", 0.05)
    core = ScriptedCore(version=None)
    core.silent = ("/_set custom ",)
    with anyio.fail_after(5):
        caps = await _probe_with(
            core, capabilities=[Capability.CUSTOM_DATA, Capability.LIVE_MESSAGES]
        )
    assert caps.version is None
    assert caps.unknown == (Capability.CUSTOM_DATA,)
    assert caps.has(Capability.LIVE_MESSAGES)


async def test_without_a_user_the_read_backs_are_unknown() -> None:
    core = ScriptedCore(user=None)
    caps = await _probe_with(core, capabilities=[Capability.PROTOCOLS_PREFERENCE])
    assert caps.unknown == (Capability.PROTOCOLS_PREFERENCE,)


async def test_the_probe_changes_nothing_it_does_not_undo() -> None:
    core = ScriptedCore()
    await _probe_with(core)
    made: Callable[[str], bool] = lambda c: c.startswith(("/_prepare", "/_address 1"))  # noqa: E731
    for n, cmd in enumerate(core.commands):
        if NOBODY in cmd or cmd in ("/version", "/user", "/_show_address 1"):
            continue
        if cmd.startswith(("/_delete ", "/_delete_address ")):
            continue  # an undo
        if made(cmd):
            undo = "/_delete_address 1" if cmd.startswith("/_address") else "/_delete "
            assert any(c.startswith(undo) for c in core.commands[n + 1 :]), cmd
            continue
        assert cmd.startswith("/_address_settings 1 "), cmd


async def test_results_in_json_say_what_each_capability_affects() -> None:
    caps = await _probe_with(ScriptedCore(refuses=(r"^/_set custom ",)))
    out = caps.to_json()
    assert out["core"] == {"version": "7.1.0.14"}
    entry = next(c for c in out["capabilities"] if c["name"] == "custom-data")
    assert entry["status"] == "missing"
    assert entry["affects"] == Capability.CUSTOM_DATA.affects
    assert {"name", "status", "affects"} <= set(entry)
    assert caps.result("custom-data").describe().startswith("custom-data: missing (")


def test_every_capability_says_what_it_uses_and_what_it_affects() -> None:
    for capability in Capability:
        assert capability.uses and capability.affects
        assert capability.value == capability.value.lower()


def test_docs_list_every_capability_and_every_seed_only_form() -> None:
    from pathlib import Path

    from simplex_protocols.core import commands

    doc = (Path(__file__).resolve().parents[2] / "docs" / "core.md").read_text(encoding="utf-8")
    capabilities = doc.split("## Capabilities: `probe_core`", 1)[1].split("\n## ", 1)[0]
    for capability in Capability:
        assert f"\n| `{capability}` |" in capabilities, capability
    seeds = doc.split("## Syntax known only from the seeds", 1)[1]
    for builder, known in commands.SEED_ONLY.items():
        row = next(line for line in seeds.splitlines() if line.startswith(f"| `{builder}` |"))
        assert row.rstrip(" |").endswith(known.source), builder
        assert callable(getattr(commands, builder))
