"""The simulated core's parser: every command string gets a response, never an exception."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simplex_protocols._clock import ManualClock
from simplex_protocols.sim import SimNetwork
from simplex_protocols.sim._cmd_reading import get_chat
from simplex_protocols.sim._core import GRAMMAR

COMMANDS = GRAMMAR.commands
parse_command = GRAMMAR.parse

_NETWORK = SimNetwork(seed=11, clock=ManualClock())
_ALICE = _NETWORK.add_user("alice")
_BOB = _NETWORK.add_user("bob")
_LINK = _BOB.create_address(pq_ratchet=True)
_ALICE.command(f"/_connect 1 {_LINK}")
_GROUP = _ALICE.command('/_group 1 {"displayName":"g","fullName":""}')["groupInfo"]["groupId"]

_HEADS = sorted({spec.pattern.split(" ", 1)[0].split("[", 1)[0] for spec in COMMANDS})
_ARGS = st.sampled_from(
    [
        "1",
        "2",
        "3",
        "0",
        "-1",
        "99999999999999999999",
        "@3",
        "#1",
        f"#{_GROUP}",
        "*1",
        ":1",
        "on",
        "off",
        "count=3",
        "initial=2",
        "around=1 count=0",
        "json",
        "text",
        "hello",
        "{}",
        "[]",
        '{"displayName":"x","fullName":""}',
        '[{"msgContent":{"type":"text","text":"hi"}}]',
        '[{"msgContent":{"type":"text","text":"hi"},"quotedItemId":"x"}]',
        '{"protocol":"mcp","request":{}}',
        '{"businessAddress":true,"serves":[1]}',
        "member",
        "owner",
        "broadcast",
        "full",
        "notify=off",
        "incognito=on",
        "pq_ratchet=on",
        "timeout=0.5",
        "plan",
        "contact",
        "group",
        _LINK,
        "@bob.simplex",
        "#chan.simplex",
        "https://smp1.sim.test/a#AAAA",
        '{"broken":',
        "\u0000",
        "é",
    ]
)


def _check(response: dict[str, object]) -> None:
    assert isinstance(response.get("type"), str)
    if response["type"] == "chatCmdError":
        error = response["chatError"]
        assert isinstance(error, dict)
        # a failing command is the core's error, never the simulator's own crash
        assert error.get("errorType", {}).get("type") != "internalError", error


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=80))
def test_any_text_gets_a_response(text: str) -> None:
    _check(_ALICE.command(text))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_HEADS), st.lists(_ARGS, max_size=6))
def test_commands_with_arbitrary_arguments_get_the_cores_errors(head: str, args: list[str]) -> None:
    _check(_ALICE.command(" ".join([head, *args])))


def test_every_pattern_has_a_handler() -> None:
    core = _NETWORK.core("alice")
    for spec in core.grammar.commands:
        assert callable(spec.handler), spec.pattern


#: A value of each parameter type of the grammar, to write a command of each pattern.
_SAMPLES = {
    "int": "1",
    "ids": "1,2",
    "onoff": "on",
    "word": "w",
    "num": "1.5",
    "role": "member",
    "chatref": "@1",
    "sendref": "#1",
    "json": "{}",
    "rest": "r",
    "text": "t",
    "delmode": "full",
    "itemdel": "internal",
    "resolve": "never",
    "ttl": "5",
    "page": "count=1",
    "timepage": "count=1",
    "contenttag": "text",
}


def _example(pattern: str) -> str:
    """The shortest command a pattern describes: optional parts left out, each parameter a
    sample of its type."""
    text = pattern
    while "[" in text:
        text = re.sub(r"\[[^\[\]]*\]", "", text)
    return re.sub(
        r"<[A-Za-z_]+(?::([^>]+))?>",
        lambda m: _SAMPLES.get(m.group(1) or "word", (m.group(1) or "").split("|")[0]),
        text,
    )


def test_every_pattern_is_reachable_and_selects_its_own_handler() -> None:
    # an earlier pattern that swallowed a later one's commands would shadow its handler
    for spec in COMMANDS:
        parsed = parse_command(_example(spec.pattern))
        assert not isinstance(parsed, str), (spec.pattern, parsed)
        assert (parsed.pattern, parsed.handler) == (spec.pattern, spec.handler)


def test_unknown_command_message_names_the_expected_syntax() -> None:
    message = parse_command("/_send @1 nonsense")
    assert isinstance(message, str)
    assert message.startswith("Failed reading: /_send <ref:sendref>")
    assert parse_command("/nope") == "Failed reading: unknown command '/nope'"
    parsed = parse_command("/_get chat #12 count=5   ")
    assert not isinstance(parsed, str)
    assert parsed.handler is get_chat
    assert parsed.args["ref"] == "#12"
