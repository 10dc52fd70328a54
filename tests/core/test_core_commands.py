"""Every command builder: exact strings, quoting, JSON last, and refusal of bad arguments."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from simplex_protocols.core import ContactRef, GroupRef, parse_chat_ref
from simplex_protocols.core import commands as c
from simplex_protocols.errors import CommandArgumentError

A = ContactRef(4)
G = GroupRef(15)
PROFILE = {"displayName": "my-agent", "fullName": "", "peerType": "agent"}

BUILT: list[tuple[str, Callable[[], str], str]] = [
    # 3.1 users and profile
    ("show active user", c.show_active_user, "/user"),
    ("list users", c.list_users, "/users"),
    (
        "create user",
        lambda: c.create_active_user(PROFILE),
        '/_create user {"profile":{"displayName":"my-agent","fullName":"","peerType":"agent"},"pastTimestamp":false}',
    ),
    (
        "create user with flags",
        lambda: c.create_active_user(None, user_chat_relay=False, client_service=True),
        '/_create user {"pastTimestamp":false,"userChatRelay":false,"clientService":true}',
    ),
    ("set active user", lambda: c.set_active_user(2), "/_user 2"),
    (
        "set active user with password",
        lambda: c.set_active_user(2, view_password='p "w'),
        '/_user 2 "p \\"w"',
    ),
    (
        "update profile",
        lambda: c.update_profile(
            1, {"displayName": "My Agent", "fullName": "", "preferences": {"protocols": {}}}
        ),
        '/_profile 1 {"displayName":"My Agent","fullName":"","preferences":{"protocols":{}}}',
    ),
    (
        "contact prefs",
        lambda: c.set_contact_prefs(4, {"calls": {"allow": "no"}}),
        '/_set prefs @4 {"calls":{"allow":"no"}}',
    ),
    # 3.2 controller
    ("start", c.start_chat, "/_start main=on"),
    (
        "start with service requests",
        lambda: c.start_chat(service_requests=True),
        "/_start main=on service_requests=on",
    ),
    (
        "start all flags",
        lambda: c.start_chat(main=False, snd_files=True, service_requests=True),
        "/_start main=off snd_files=on service_requests=on",
    ),
    ("stop", c.stop_chat, "/_stop"),
    ("get network", c.get_network_config, "/network"),
    (
        "set network as the MCP server plan does",
        lambda: c.set_network_config(smp_proxy="always", smp_proxy_fallback="protected"),
        "/network socks=off smp-proxy=always smp-proxy-fallback=protected",
    ),
    (
        "set network every option",
        lambda: c.set_network_config(
            socks="127.0.0.1:9050",
            socks_mode="onion",
            host_mode="public",
            required_host_mode=True,
            smp_proxy="unknown",
            smp_proxy_fallback="allow",
            timeout_s=30,
            log=True,
        ),
        "/network socks=127.0.0.1:9050 socks-mode=onion host-mode=public required-host-mode "
        "smp-proxy=unknown smp-proxy-fallback=allow timeout=30 log=on",
    ),
    ("sql chat", lambda: c.exec_chat_sql("SELECT 1 FROM users"), "/sql chat SELECT 1 FROM users"),
    (
        "sql agent",
        lambda: c.exec_agent_sql("SELECT count(*) FROM x"),
        "/sql agent SELECT count(*) FROM x",
    ),
    # 3.3 address
    ("address", lambda: c.create_my_address(1), "/_address 1"),
    ("address pq on", lambda: c.create_my_address(1, pq_ratchet=True), "/_address 1 pq_ratchet=on"),
    (
        "address pq off",
        lambda: c.create_my_address(1, pq_ratchet=False),
        "/_address 1 pq_ratchet=off",
    ),
    (
        "short link address",
        lambda: c.add_my_address_short_link(1, pq_ratchet=True),
        "/_short_link_address 1 pq_ratchet=on",
    ),
    ("show address", lambda: c.show_my_address(1), "/_show_address 1"),
    (
        "address settings",
        lambda: c.set_address_settings(
            1, {"businessAddress": False, "autoAccept": {"acceptIncognito": False}}, pq_ratchet=True
        ),
        '/_address_settings 1 pq_ratchet=on {"businessAddress":false,"autoAccept":{"acceptIncognito":false}}',
    ),
    ("profile address", lambda: c.set_profile_address(1, True), "/_profile_address 1 on"),
    ("delete address", lambda: c.delete_my_address(1), "/_delete_address 1"),
    ("accept", lambda: c.accept_contact(5), "/_accept 5"),
    ("accept incognito", lambda: c.accept_contact(5, incognito=True), "/_accept incognito=on 5"),
    ("reject", lambda: c.reject_contact(5), "/_reject 5"),
    ("reject notify", lambda: c.reject_contact(5, notify=True), "/_reject 5 notify=on"),
    (
        "auto-accept member contacts",
        lambda: c.set_auto_accept_member_contacts(1, False),
        "/_set accept member contacts 1 off",
    ),
    (
        "auto-accept group invitations",
        lambda: c.set_auto_accept_group_invitations(1, True),
        "/_set accept group invitations 1 on",
    ),
    # 3.4 connecting
    (
        "plan name",
        lambda: c.connect_plan(1, "@directory.simplex"),
        "/_connect plan 1 @directory.simplex",
    ),
    (
        "plan all options",
        lambda: c.connect_plan(
            1, "https://smp.example/a#x", resolve="never", link_owner_sig={"s": 1}
        ),
        '/_connect plan 1 https://smp.example/a#x resolve=never sig={"s":1}',
    ),
    (
        "prepare contact",
        lambda: c.prepare_contact(
            1,
            "simplex:/contact#full",
            {"profile": PROFILE, "business": False},
            short_link="https://s/c",
            domain="shop.simplex",
        ),
        '/_prepare contact 1 simplex:/contact#full https://s/c domain=shop.simplex {"profile":{"displayName":"my-agent","fullName":"","peerType":"agent"},"business":false}',
    ),
    (
        "prepare channel",
        lambda: c.prepare_group(
            1,
            "simplex:/g#full",
            {"groupProfile": {"displayName": "News"}},
            direct=False,
            domain="news.simplex",
        ),
        '/_prepare group 1 simplex:/g#full direct=off domain=news.simplex {"groupProfile":{"displayName":"News"}}',
    ),
    ("prepare group plain", lambda: c.prepare_group(1, "L", {}), "/_prepare group 1 L {}"),
    (
        "connect prepared contact with text",
        lambda: c.connect_prepared_contact(7, incognito=False, message="hello, can you help?"),
        "/_connect contact @7 incognito=off text hello, can you help?",
    ),
    (
        "connect prepared contact with json",
        lambda: c.connect_prepared_contact(7, message={"type": "text", "text": "hi"}),
        '/_connect contact @7 json {"type":"text","text":"hi"}',
    ),
    (
        "connect prepared group",
        lambda: c.connect_prepared_group(
            12, incognito=True, owner_contact=(3, "bWVt"), message="hi there"
        ),
        "/_connect group #12 incognito=on contact=3 owner=bWVt text hi there",
    ),
    ("connect prepared group bare", lambda: c.connect_prepared_group(12), "/_connect group #12"),
    ("invitation", lambda: c.add_contact(1), "/_connect 1"),
    ("invitation incognito", lambda: c.add_contact(1, incognito=True), "/_connect 1 incognito=on"),
    (
        "connect link",
        lambda: c.connect(1, "simplex:/inv#x", incognito=False),
        "/_connect 1 incognito=off simplex:/inv#x",
    ),
    (
        "connect link pair",
        lambda: c.connect(1, "full", short_link="short"),
        "/_connect 1 full short",
    ),
    (
        "connect via address",
        lambda: c.connect_contact_via_address(1, 9, incognito=True),
        "/_connect contact 1 incognito=on 9",
    ),
    # 3.5 messages
    (
        "send json",
        lambda: c.send_messages(A, [c.composed_text("trail running shoes")]),
        '/_send @4 json [{"msgContent":{"type":"text","text":"trail running shoes"},"mentions":{}}]',
    ),
    (
        "send with reply and mention",
        lambda: c.send_messages(
            G,
            [
                c.composed_text(
                    "@Switchback which size?", quoted_item_id=33, mentions={"Switchback": 44}
                )
            ],
        ),
        '/_send #15 json [{"msgContent":{"type":"text","text":"@Switchback which size?"},"quotedItemId":33,"mentions":{"Switchback":44}}]',
    ),
    (
        "send flags in order",
        lambda: c.send_messages(
            G, [{"msgContent": {"type": "text", "text": "x"}}], live=True, ttl=60, sign=True
        ),
        '/_send #15 live=on ttl=60 sign=on json [{"msgContent":{"type":"text","text":"x"}}]',
    ),
    (
        "send ttl default",
        lambda: c.send_text(A, "x", ttl="default"),
        "/_send @4 ttl=default text x",
    ),
    (
        "send text keeps everything",
        lambda: c.send_text(A, '/_call mcp {"a": "b"}\nline two  '),
        '/_send @4 text /_call mcp {"a": "b"}\nline two  ',
    ),
    (
        "update json",
        lambda: c.update_chat_item(
            G, 21, {"msgContent": {"type": "text", "text": "é"}, "mentions": {}}, live=True
        ),
        '/_update item #15 21 live=on json {"msgContent":{"type":"text","text":"é"},"mentions":{}}',
    ),
    (
        "update text",
        lambda: c.update_chat_item_text(A, 21, "edited card"),
        "/_update item @4 21 text edited card",
    ),
    ("delete items", lambda: c.delete_chat_items(A, [3, 4, 5]), "/_delete item @4 3,4,5 broadcast"),
    (
        "delete items internal",
        lambda: c.delete_chat_items(G, [9], "internalMark"),
        "/_delete item #15 9 internalMark",
    ),
    ("get chat count", lambda: c.get_chat(A, count=20), "/_get chat @4 count=20"),
    ("get chat count=0", lambda: c.get_chat(A, count=0), "/_get chat @4 count=0"),
    (
        "get chat after",
        lambda: c.get_chat(A, after=100, count=50),
        "/_get chat @4 after=100 count=50",
    ),
    (
        "get chat before",
        lambda: c.get_chat(G, before=100, count=50),
        "/_get chat #15 before=100 count=50",
    ),
    (
        "get chat around alone",
        lambda: c.get_chat(G, around=33, count=0),
        "/_get chat #15 around=33 count=0",
    ),
    ("get chat initial", lambda: c.get_chat(G, initial=20), "/_get chat #15 initial=20"),
    (
        "get chat content and search",
        lambda: c.get_chat(G, count=10, content="text", search="size 42 please"),
        "/_get chat #15 content=text count=10 search=size 42 please",
    ),
    ("get chats default", lambda: c.get_chats(1), "/_get chats 1"),
    ("get chats count", lambda: c.get_chats(1, count=20), "/_get chats 1 count=20"),
    (
        "get chats before time",
        lambda: c.get_chats(
            1, pending_connections=True, before="2026-10-17T09:15:00.123Z", count=20
        ),
        "/_get chats 1 pcc=on before=2026-10-17T09:15:00.123Z count=20",
    ),
    (
        "get chats after datetime",
        lambda: c.get_chats(
            1, after=datetime(2026, 10, 17, 11, 15, tzinfo=timezone(timedelta(hours=2))), count=5
        ),
        "/_get chats 1 after=2026-10-17T09:15:00.000Z count=5",
    ),
    (
        "get chats query",
        lambda: c.get_chats(
            1,
            pending_connections=False,
            count=100,
            query={"type": "filters", "favorite": False, "unread": True},
        ),
        '/_get chats 1 pcc=off count=100 {"type":"filters","favorite":false,"unread":true}',
    ),
    (
        "get chats search",
        lambda: c.get_chats(1, query={"type": "search", "search": "a b"}),
        '/_get chats 1 {"type":"search","search":"a b"}',
    ),
    ("read items", lambda: c.chat_items_read(A, [21, 22]), "/_read chat items @4 21,22"),
    ("read chat", lambda: c.chat_read(G), "/_read chat #15"),
    # 3.6 chats
    (
        "custom data",
        lambda: c.set_custom_data(G, {"simplexMcp": {"control": True}}),
        '/_set custom #15 {"simplexMcp":{"control":true}}',
    ),
    ("clear custom data", lambda: c.set_custom_data(A, None), "/_set custom @4"),
    ("delete chat default", lambda: c.delete_chat(A), "/_delete @4 full notify=on"),
    (
        "delete chat entity quietly",
        lambda: c.delete_chat(G, "entity", notify=False),
        "/_delete #15 entity notify=off",
    ),
    ("delete messages", lambda: c.delete_chat(A, "messages"), "/_delete @4 messages"),
    ("contact info", lambda: c.contact_info(4), "/_info @4"),
    ("group info", lambda: c.group_info(15), "/_info #15"),
    ("contacts", lambda: c.list_contacts(1), "/_contacts 1"),
    ("groups", lambda: c.list_groups(1), "/_groups 1"),
    (
        "groups with contact and search",
        lambda: c.list_groups(1, contact_id=4, search="@ team x"),
        "/_groups 1 @4 @ team x",
    ),
    (
        "groups search with spaces",
        lambda: c.list_groups(1, search="hiking club"),
        "/_groups 1 hiking club",
    ),
    # 3.7 groups
    (
        "new group",
        lambda: c.new_group(1, {"displayName": "My Agent", "fullName": ""}),
        '/_group 1 {"displayName":"My Agent","fullName":""}',
    ),
    (
        "new group incognito",
        lambda: c.new_group(1, {"displayName": "G"}, incognito=True),
        '/_group 1 incognito=on {"displayName":"G"}',
    ),
    (
        "group profile",
        lambda: c.update_group_profile(15, {"displayName": "G"}),
        '/_group_profile #15 {"displayName":"G"}',
    ),
    ("members", lambda: c.list_members(15), "/_members #15"),
    ("member role", lambda: c.set_members_role(15, [44], "admin"), "/_member role #15 44 admin"),
    (
        "members role",
        lambda: c.set_members_role(15, [44, 45], "observer"),
        "/_member role #15 44,45 observer",
    ),
    ("remove", lambda: c.remove_members(15, [44]), "/_remove #15 44"),
    (
        "remove with messages",
        lambda: c.remove_members(15, [44, 46], with_messages=True),
        "/_remove #15 44,46 messages=on",
    ),
    ("leave", lambda: c.leave_group(15), "/_leave #15"),
    ("join", lambda: c.join_group(15), "/_join #15"),
    ("add member", lambda: c.add_member(15, 4, "member"), "/_add #15 4 member"),
    ("create link", lambda: c.create_group_link(15), "/_create link #15 member"),
    (
        "create link observer",
        lambda: c.create_group_link(15, "observer"),
        "/_create link #15 observer",
    ),
    ("link role", lambda: c.set_group_link_role(15, "member"), "/_set link role #15 member"),
    ("delete link", lambda: c.delete_group_link(15), "/_delete link #15"),
    ("get link", lambda: c.get_group_link(15), "/_get link #15"),
    # 3.8 service RPC
    (
        "service request",
        lambda: c.send_service_request(
            1, "@shop.simplex", {"protocol": "mcp", "request": {"jsonrpc": "2.0"}}
        ),
        '/_service_request 1 @shop.simplex {"protocol":"mcp","request":{"jsonrpc":"2.0"}}',
    ),
    (
        "service request timeout and key",
        lambda: c.send_service_request(
            1,
            "https://s/a",
            {"protocol": "a2a"},
            timeout_s=2.5,
            sign_key="MC4CAQAwBQYDK2VwBCIEI_x-y",
        ),
        '/_service_request 1 https://s/a timeout=2.5 sign_key=MC4CAQAwBQYDK2VwBCIEI_x-y {"protocol":"a2a"}',
    ),
    (
        "service request integer timeout",
        lambda: c.send_service_request(1, "t", {}, timeout_s=30),
        "/_service_request 1 t timeout=30 {}",
    ),
    (
        "service response",
        lambda: c.send_service_response(1, "aW52LTE", {"response": {"ok": True}}),
        '/_service_response 1 aW52LTE {"response":{"ok":true}}',
    ),
]


@pytest.mark.parametrize(
    ("build", "expected"), [(b, e) for _, b, e in BUILT], ids=[n for n, _, _ in BUILT]
)
def test_command_strings(build: Callable[[], str], expected: str) -> None:
    assert build() == expected


@pytest.mark.parametrize(
    ("build", "expected"),
    [(b, e) for _, b, e in BUILT if e.endswith(("}", "]"))],
    ids=[n for n, _, e in BUILT if e.endswith(("}", "]"))],
)
def test_json_argument_is_last_and_compact(build: Callable[[], str], expected: str) -> None:
    text = build()
    start = min(i for i in (text.find(m) for m in (" {", " [", "={")) if i >= 0) + 1
    value = json.loads(text[start:])
    assert json.dumps(value, ensure_ascii=False, separators=(",", ":")) == text[start:]


REFUSED: list[tuple[str, Callable[[], Any], str]] = [
    ("zero id", lambda: c.show_my_address(0), "bad_id"),
    ("negative id", lambda: c.contact_info(-4), "bad_id"),
    ("bool id", lambda: c.contact_info(True), "bad_id"),
    ("string id", lambda: c.group_info("15"), "bad_id"),  # type: ignore[arg-type]
    ("16-digit id", lambda: c.contact_info(10**15), "id_too_long"),
    ("20-digit wraparound id", lambda: c.group_info(18446744073709551626), "id_too_long"),
    ("ref with too many digits", lambda: ContactRef(1_000_000_000_000_000), "id_too_long"),
    ("ref of zero", lambda: GroupRef(0), "bad_id"),
    ("empty id list", lambda: c.chat_items_read(A, []), "empty_list"),
    ("bad id in list", lambda: c.remove_members(15, [44, 0]), "bad_id"),
    ("not a ref", lambda: c.chat_read("@4"), "bad_chat_ref"),  # type: ignore[arg-type]
    ("link with space", lambda: c.connect(1, "simplex:/a b"), "bad_token"),
    ("target with newline", lambda: c.connect_plan(1, "@x.simplex\n/_stop"), "bad_token"),
    ("empty target", lambda: c.send_service_request(1, "", {}), "bad_token"),
    ("key with space", lambda: c.send_service_request(1, "t", {}, sign_key="a b"), "bad_token"),
    ("request id with space", lambda: c.send_service_response(1, "a b", {}), "bad_token"),
    ("domain with space", lambda: c.prepare_contact(1, "L", {}, domain="a b"), "bad_token"),
    ("request not an object", lambda: c.send_service_request(1, "t", [1]), "bad_json"),  # type: ignore[arg-type]
    ("NaN in JSON", lambda: c.update_profile(1, {"x": float("nan")}), "bad_json"),
    ("unserialisable JSON", lambda: c.set_custom_data(A, {"x": object()}), "bad_json"),
    ("zero timeout", lambda: c.send_service_request(1, "t", {}, timeout_s=0), "bad_timeout"),
    (
        "infinite timeout",
        lambda: c.send_service_request(1, "t", {}, timeout_s=float("inf")),
        "bad_timeout",
    ),
    ("unknown role", lambda: c.add_member(15, 4, "author"), "bad_role"),  # type: ignore[arg-type]
    ("relay role", lambda: c.set_group_link_role(15, "relay"), "bad_role"),  # type: ignore[arg-type]
    ("no messages", lambda: c.send_messages(A, []), "empty_list"),
    ("message not an object", lambda: c.send_messages(A, ["hi"]), "bad_json"),  # type: ignore[list-item]
    (
        "message not JSON",
        lambda: c.send_messages(A, [{"msgContent": {"type": "text", "text": float("nan")}}]),
        "bad_json",
    ),
    ("pagination missing", lambda: c.get_chat(A), "bad_pagination"),
    ("initial with count", lambda: c.get_chat(A, initial=5, count=5), "bad_pagination"),
    ("two anchors", lambda: c.get_chat(A, after=1, before=9, count=5), "bad_pagination"),
    ("negative count", lambda: c.get_chat(A, count=-1), "bad_count"),
    ("empty search", lambda: c.get_chat(A, count=5, search=""), "bad_text"),
    (
        "chats after and before",
        lambda: c.get_chats(1, after="a", before="b", count=1),
        "bad_pagination",
    ),
    (
        "chats time without count",
        lambda: c.get_chats(1, after="2026-01-01T00:00:00Z"),
        "bad_pagination",
    ),
    ("naive datetime", lambda: c.get_chats(1, after=datetime(2026, 1, 1), count=1), "bad_time"),
    ("notify with messages mode", lambda: c.delete_chat(A, "messages", notify=True), "bad_token"),
    ("ambiguous group search", lambda: c.list_groups(1, search="@12 team"), "ambiguous_search"),
    ("empty sql", lambda: c.exec_chat_sql("  "), "bad_text"),
    ("bad resolve mode", lambda: c.connect_plan(1, "x", resolve="all"), "bad_token"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(
    ("build", "code"), [(b, e) for _, b, e in REFUSED], ids=[n for n, _, _ in REFUSED]
)
def test_bad_arguments_are_refused_with_a_code(build: Callable[[], Any], code: str) -> None:
    with pytest.raises(CommandArgumentError) as info:
        build()
    assert info.value.code == code
    assert isinstance(info.value, ValueError)


def test_fifteen_digit_ids_are_accepted() -> None:
    assert c.contact_info(999_999_999_999_999) == "/_info @999999999999999"


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("@4", ContactRef(4)),
        ("#15", GroupRef(15)),
        ("#999999999999999", GroupRef(999_999_999_999_999)),
        ("@007", ContactRef(7)),
    ],
)
def test_parse_chat_ref(text: str, ref: Any) -> None:
    assert parse_chat_ref(text) == ref


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("#1000000000000000", "id_too_long"),
        ("#18446744073709551626", "id_too_long"),
        ("@0", "bad_chat_ref"),
        ("@", "bad_chat_ref"),
        ("4", "bad_chat_ref"),
        ("*3", "bad_chat_ref"),
        ("@-1", "bad_chat_ref"),
        ("@1 2", "bad_chat_ref"),
        ("#١٢", "bad_chat_ref"),
        ("#15(_support)", "bad_chat_ref"),
    ],
)
def test_parse_chat_ref_refusals(text: str, code: str) -> None:
    with pytest.raises(CommandArgumentError) as info:
        parse_chat_ref(text)
    assert info.value.code == code


def test_refs_render_as_the_core_writes_them() -> None:
    assert (str(ContactRef(4)), str(GroupRef(15))) == ("@4", "#15")


@pytest.mark.parametrize(
    ("name", "quoted"),
    [
        ("Switchback", "Switchback"),
        ("Alice Smith", "'Alice Smith'"),
        ("Dr.", "'Dr.'"),
        ("bob!", "'bob!'"),
        ("a-b", "a-b"),
        ("ünïcode", "ünïcode"),
        ("tab\there", "'tab\there'"),
        ("end—", "'end—'"),
    ],
)
def test_quote_name_follows_the_core(name: str, quoted: str) -> None:
    assert c.quote_name(name) == quoted
    assert c.mention(name) == "@" + quoted


@pytest.mark.parametrize("name", ["", "O'Brien", "two\nlines", "bell\x07"])
def test_quote_name_refuses_names_the_core_cannot_have(name: str) -> None:
    with pytest.raises(CommandArgumentError) as info:
        c.quote_name(name)
    assert info.value.code == "bad_name"


def test_mention_in_a_group_message() -> None:
    text = f"{c.mention('Alice Smith')} and {c.mention('Bob')}: ready?"
    cmd = c.send_messages(G, [c.composed_text(text, mentions={"Alice Smith": 44, "Bob": 45})])
    assert cmd == (
        '/_send #15 json [{"msgContent":{"type":"text","text":"@\'Alice Smith\' and @Bob: ready?"},'
        '"mentions":{"Alice Smith":44,"Bob":45}}]'
    )


def test_datetime_is_written_in_utc() -> None:
    when = datetime(2026, 10, 17, 9, 15, 0, 123000, tzinfo=UTC)
    assert (
        c.get_chats(1, before=when, count=1)
        == "/_get chats 1 before=2026-10-17T09:15:00.123Z count=1"
    )


def test_command_names_are_the_first_word_of_what_the_builders_write() -> None:
    # errors and records name these commands by the constants; they must not drift
    for built in (
        c.send_text(A, "hi"),
        c.send_messages(G, [c.composed_text("hi")], ttl=30),
    ):
        assert built.split(" ", 1)[0] == c.SEND_VERB
    built = c.send_service_request(1, "@shop.simplex", {"protocol": "mcp", "request": {}})
    assert built.split(" ", 1)[0] == c.SERVICE_REQUEST_VERB
