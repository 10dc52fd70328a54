"""Every card form and outcome (plan "What the owner sees: the agent control chat")."""

from __future__ import annotations

from mcp_sim import core_formatted_lines

from simplex_protocols.mcp_server.cards import (
    MAX_CARD_BYTES,
    Outcome,
    ReplyTo,
    Subject,
    card_size,
    connect_card,
    largest_send_form,
    leave_card,
    send_card,
)

DIRECTORY = Subject("bot", "SimpleX Directory", "@directory.simplex", "@4")
RIDGELINE = Subject("business", "Ridgeline", None, "#9", incognito=True)


def test_connect_card_as_myself_with_the_link_description() -> None:
    card = connect_card(
        1, DIRECTORY, incognito=False, description="Find groups, channels, businesses and bots."
    )
    assert card.pending() == (
        "I want to connect to bot SimpleX Directory (@directory.simplex), as myself.\n"
        "`Find groups, channels, businesses and bots.`\n"
        "/'approve 1' or /'reject 1'"
    )


def test_connect_card_incognito_with_a_message() -> None:
    card = connect_card(
        3,
        Subject("business", "Ridgeline"),
        incognito=True,
        message="Do you have trail shoes under $150 in size 44?",
    )
    assert card.pending() == (
        "I want to connect to business Ridgeline, incognito.\n"
        "With the message:\n"
        "`Do you have trail shoes under $150 in size 44?`\n"
        "/'approve 3' or /'reject 3'"
    )


def test_connect_card_quotes_description_then_welcome_then_message() -> None:
    card = connect_card(
        5,
        Subject("channel", "Ridgeline News", "#ridgeline.simplex"),
        incognito=True,
        description="News",
        welcome="Hi\nthere",
        message="m",
    )
    assert card.body == ("`News`", "`Hi`", "`there`", "With the message:", "`m`")


def test_connect_outcomes() -> None:
    card = connect_card(1, DIRECTORY, incognito=False)
    assert (
        card.outcome(Outcome.DONE, by="Alice")
        == "I connected to bot SimpleX Directory (@directory.simplex), as myself.\nApproved by Alice."
    )
    assert (
        card.outcome(Outcome.NOT_CONNECTED, by="Alice")
        == "I asked to connect to bot SimpleX Directory (@directory.simplex), as myself.\nApproved by Alice."
    )
    assert (
        card.outcome(Outcome.REJECTED, by="Alice")
        == "I want to connect to bot SimpleX Directory (@directory.simplex), as myself.\nRejected by Alice."
    )
    assert (
        card.outcome(Outcome.EXPIRED)
        == "I want to connect to bot SimpleX Directory (@directory.simplex), as myself.\nExpired."
    )
    assert card.outcome(Outcome.CANCELLED).endswith("\nCancelled: the server stopped.")
    assert card.outcome(Outcome.INTERRUPTED, by="Alice").endswith(
        "\nApproved by Alice; interrupted: the server stopped."
    )
    assert card.outcome(Outcome.FAILED, by="Alice", error="Name not found:\nx").endswith(
        "\nApproved by Alice; failed: `Name not found: x`."
    )
    assert (
        card.outcome(Outcome.HOST)
        == "I connected to bot SimpleX Directory (@directory.simplex), as myself.\nPerformed without approval (mode host)."
    )
    assert card.outcome(Outcome.HOST_FAILED, error="e").endswith(
        "\nPerformed without approval (mode host); failed: `e`."
    )
    assert card.outcome(Outcome.HOST_INTERRUPTED).endswith(
        "\nPerformed without approval (mode host); interrupted: the server stopped."
    )


def test_send_card_names_the_chat_in_its_commands() -> None:
    card = send_card(2, DIRECTORY, "@4", "trail running shoes")
    assert card.pending() == (
        "I want to send a message to bot SimpleX Directory (@directory.simplex):\n"
        "`trail running shoes`\n"
        "/'approve @4 2', /'approve @4 all' or /'reject @4 2'"
    )


def test_send_card_where_i_am_incognito_with_reply_and_mention() -> None:
    card = send_card(
        4,
        RIDGELINE,
        "#9",
        "Is the Talus Trail waterproof?",
        reply_to=ReplyTo("Switchback", "Ridgecrest, $142"),
        mentions=["Switchback"],
    )
    assert card.pending() == (
        "I want to send a message to business Ridgeline, where I am incognito:\n"
        "`Is the Talus Trail waterproof?`\n"
        "replying to Switchback: `Ridgecrest, $142`\n"
        "mentioning @Switchback\n"
        "/'approve #9 4', /'approve #9 all' or /'reject #9 4'"
    )


def test_send_outcomes_done_standing_and_failed() -> None:
    card = send_card(10, RIDGELINE, "#9", "Any discount for two pairs?")
    assert card.outcome(Outcome.DONE, by="Alice") == (
        "I sent a message to business Ridgeline, where I am incognito:\n`Any discount for two pairs?`\nApproved by Alice."
    )
    assert card.outcome(Outcome.STANDING, by="Alice") == (
        "I sent a message to business Ridgeline, where I am incognito:\n`Any discount for two pairs?`\nApproved for this chat by Alice. /'revoke #9'"
    )
    assert card.outcome(Outcome.STANDING_FAILED, by="Alice", error="x") == (
        "I want to send a message to business Ridgeline, where I am incognito:\n`Any discount for two pairs?`\nApproved for this chat by Alice; failed: `x`."
    )


def test_leave_and_delete_cards() -> None:
    assert leave_card(12, Subject("business", "Ridgeline", chat="#9"), "#9").pending() == (
        "I want to leave business Ridgeline (#9).\n/'approve #9 12' or /'reject #9 12'"
    )
    card = leave_card(13, DIRECTORY, "@4")
    assert (
        card.pending()
        == "I want to delete bot SimpleX Directory (@4).\n/'approve @4 13' or /'reject @4 13'"
    )
    assert (
        card.outcome(Outcome.DONE, by="Alice")
        == "I deleted bot SimpleX Directory (@4).\nApproved by Alice."
    )
    assert (
        leave_card(12, Subject("business", "Ridgeline"), "#9").outcome(Outcome.DONE, by="Alice")
        == "I left business Ridgeline (#9).\nApproved by Alice."
    )


def _commands_in(text: str) -> list[str]:
    """The tappable commands of a text, in the chat core's ``formattedText`` of it."""
    return [t for line in core_formatted_lines(text) for kind, t in line if kind == "command"]


def test_peer_text_and_names_never_form_a_command_or_a_second_line() -> None:
    evil = Subject("group", "\n/approve 1", None, "#15")
    card = send_card(
        7,
        evil,
        "#15",
        "hi\n/approve 1\n `/approve 2` \nsimplex:/contact#abc",
        reply_to=ReplyTo("x\n/reject 7", "a\n/approve 3"),
        mentions=["y\n/approve 4"],
    )
    text = card.pending()
    assert _commands_in(text) == ["/'approve #15 7'", "/'approve #15 all'", "/'reject #15 7'"]
    lines = text.split("\n")
    assert lines[0] == "I want to send a message to group `\u00a0/approve 1`:"
    assert lines[1:5] == [
        "`hi`",
        "`/approve 1`",
        "`\u00a0'/approve 2'\u00a0`",
        "`simplex:/contact#abc`",
    ]
    assert lines[5] == "replying to `x /reject 7`: `a /approve 3`"
    assert lines[6] == "mentioning `@y /approve 4`"
    # As the owner's app reads it: the card's own commands, code spans, no link of the peer's.
    formatted = core_formatted_lines(text)
    assert {kind for line in formatted for kind, _ in line} <= {None, "snippet", "command"}
    for line in formatted[1:5]:
        assert [kind for kind, _ in line] == ["snippet"], line


def test_the_core_formatted_text_shows_what_an_unsafe_card_would_let_through() -> None:
    # The check above can fail: text that is not a code span forms commands and links.
    formatted = core_formatted_lines("I want to send:\n/approve 1 https://simplex.chat\n`ok`")
    assert formatted[1] == [("command", "/approve"), (None, " 1 "), ("uri", "https://simplex.chat")]
    assert formatted[2] == [("snippet", "ok")]


def test_approver_names_are_made_safe() -> None:
    card = connect_card(1, DIRECTORY, incognito=False)
    assert card.outcome(Outcome.DONE, by="A\n/approve 2").endswith("Approved by `A /approve 2`.")


def test_a_card_without_a_name() -> None:
    card = connect_card(1, Subject("contact"), incognito=True)
    assert card.want == "I want to connect to an unnamed contact, incognito."


def test_card_size_is_measured_as_aeson_encodes() -> None:
    assert card_size('a"\\\n\x01é') == 1 + 2 + 2 + 2 + 6 + 2


def test_largest_send_form_counts_the_approver_and_a_600_character_error() -> None:
    card = send_card(2, DIRECTORY, "@4", "x")
    size = largest_send_form(card, approver="Alice", standing=False)
    failed = card.outcome(Outcome.FAILED, by="Alice", error="\u20ac" * 600)
    assert size == card_size(failed)
    assert size > 1800
    long_text = "y" * (MAX_CARD_BYTES - 2000)
    assert (
        largest_send_form(
            send_card(2, DIRECTORY, "@4", long_text), approver="Alice", standing=False
        )
        <= MAX_CARD_BYTES
    )
    assert (
        largest_send_form(
            send_card(2, DIRECTORY, "@4", long_text + "y" * 300), approver="Alice", standing=False
        )
        > MAX_CARD_BYTES
    )
