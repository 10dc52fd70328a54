"""Message sizes as the core counts them: the model, its boundaries and an independent rebuild."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simplex_protocols import _wire
from simplex_protocols._framing import MSG_NEW_ENVELOPE_BYTES
from simplex_protocols.chat_call import check_message_size, fits_in_message
from simplex_protocols.chat_call.advanced import message_size, reply_budget
from simplex_protocols.errors import MessageTooLargeError
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES

# --------------------------------------------------------------- an aeson-like encoder, for checks


def aeson_encode(value: Any) -> str:
    """JSON as aeson writes it: compact, UTF-8 unescaped, short escapes only for " \\ \\n \\r \\t."""
    if isinstance(value, str):
        out = ['"']
        for ch in value:
            if ch == '"':
                out.append('\\"')
            elif ch == "\\":
                out.append("\\\\")
            elif ch == "\n":
                out.append("\\n")
            elif ch == "\r":
                out.append("\\r")
            elif ch == "\t":
                out.append("\\t")
            elif ch < " ":
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        out.append('"')
        return "".join(out)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return (
            "{" + ",".join(f"{aeson_encode(k)}:{aeson_encode(v)}" for k, v in value.items()) + "}"
        )
    raise TypeError(value)


SHARED_ID = "QUFBQUFBQUFBQUFBQUFBQQ=="  # 12 random bytes, base64 twice: 24 characters
MEMBER_ID = "TU1NTU1NTU1NTU1NTU1NTQ=="
LONGEST_STAMP = "2026-10-17T09:04:50.123456789012Z"


def core_message(text: str, *, quoted: str | None = None, in_group: bool = False) -> str:
    """The x.msg.new JSON the core builds for a text message, rebuilt by hand."""
    params: dict[str, Any] = {}
    if quoted is not None:
        msg_ref: dict[str, Any] = {"msgId": SHARED_ID, "sentAt": LONGEST_STAMP, "sent": False}
        if in_group:
            msg_ref["memberId"] = MEMBER_ID
        params["quote"] = {"msgRef": msg_ref, "content": {"type": "text", "text": quoted}}
    params["content"] = {"type": "text", "text": text}
    return aeson_encode({"v": "1-16", "msgId": SHARED_ID, "event": "x.msg.new", "params": params})


def encoded_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


# ---------------------------------------------------------------------------------- tests


def test_the_rebuilt_envelope_is_the_measured_114_bytes() -> None:
    assert encoded_len(core_message("")) == MSG_NEW_ENVELOPE_BYTES == 114


@pytest.mark.requirement("CALL-SIZE-2")
@given(st.text(max_size=200), st.none() | st.text(max_size=200), st.booleans())
def test_model_equals_the_rebuilt_core_json(text: str, quoted: str | None, in_group: bool) -> None:
    expected = encoded_len(core_message(text, quoted=quoted, in_group=in_group))
    assert message_size(text, quoted_text=quoted, in_group=in_group) == expected


def test_quote_costs_150_bytes_direct_and_188_in_a_group_plus_the_quoted_text() -> None:
    assert message_size("x", quoted_text="") - message_size("x") == 150
    assert message_size("x", quoted_text="", in_group=True) - message_size("x") == 188
    assert message_size("x", quoted_text='a"b') - message_size("x") == 150 + 4


def test_a_known_quote_time_is_counted_as_written() -> None:
    short = _wire.chat_message_size("x", quoted_text="q", quote_sent_at="2026-10-17T09:04:50Z")
    assert message_size("x", quoted_text="q") - short == 13


def test_group_without_a_quote_is_the_same_as_direct() -> None:
    assert message_size("abc", in_group=True) == message_size("abc") == 117


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("", 114),
        ('"', 116),
        ("\\", 116),
        ("\n", 116),
        ("\x01", 120),
        ("\x1f", 120),
        ("\x7f", 115),
        ("é", 116),
        ("😀", 118),
        ("\u2028", 117),
        ("\u202e", 117),
        ("</script>", 123),
    ],
)
@pytest.mark.requirement("CALL-SIZE-2")
def test_escapes_count(text: str, size: int) -> None:
    assert message_size(text) == size


def _text_of_size(target: int, tail: str) -> str:
    """A text whose message is exactly ``target`` bytes: filler then ``tail``."""
    base = message_size(tail)
    return "a" * (target - base) + tail


@pytest.mark.parametrize("tail", ["", '"\\\n\t\x00', "é😀\u2028"])
@pytest.mark.requirement("CALL-SIZE-1", "CALL-SIZE-2")
def test_limit_boundaries(tail: str) -> None:
    under, at, over = (_text_of_size(n, tail) for n in (15_601, 15_602, 15_603))
    assert [message_size(t) for t in (under, at, over)] == [15_601, 15_602, 15_603]
    assert fits_in_message(under) and fits_in_message(at) and not fits_in_message(over)
    assert check_message_size(at) == MAX_CHAT_MESSAGE_BYTES
    with pytest.raises(MessageTooLargeError) as info:
        check_message_size(over)
    assert (info.value.size, info.value.limit) == (15_603, 15_602)


@pytest.mark.requirement("CALL-SIZE-2")
def test_boundary_with_a_quote_in_a_group() -> None:
    command = '/_call @bob mcp {"q":"\\"x\\""}'
    room = reply_budget(command, in_group=True)
    assert room == 15_602 - 114 - 188 - _wire.aeson_string_size(command)
    at = "b" * room
    assert fits_in_message(at, quoted_text=command, in_group=True)
    assert not fits_in_message(at + "b", quoted_text=command, in_group=True)
    assert fits_in_message(at + "b", quoted_text=command, in_group=False)


def test_reply_budget_goes_negative_for_a_command_near_the_limit() -> None:
    command = "/_call mcp " + '{"x":"' + "a" * 15_400 + '"}'
    assert fits_in_message(command)
    assert reply_budget(command) < 0
