"""Lists that fit: the pager of the MCP binding (_mcp_pages) and the binding's list methods.

The pager is checked on its own against made-up server lists (any items of any sizes, the
server paging or not), and through MCPBinding with SDK servers over both transports. Sizes
are checked with the transports' own rules (``check_service_size`` for Service RPC,
``build_reply`` for a reply quoting its command), never with the pager's arithmetic.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.server import Server, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)

from simplex_protocols import _wire
from simplex_protocols._clock import ManualClock
from simplex_protocols.bindings import Caller, EnvelopeOutcome, TransportKind, caller_of
from simplex_protocols.bindings._mcp_pages import (
    LIST_METHODS,
    MAX_UPSTREAM_PAGES,
    SNAPSHOT_TTL_S,
    CursorError,
    ItemTooLarge,
    ListSnapshots,
    Page,
    PageCursor,
    PageMeasure,
    ServerPage,
    UpstreamListError,
    chat_measure,
    decode_cursor,
    encode_cursor,
    next_page,
    read_server_page,
    rpc_measure,
)
from simplex_protocols.bindings.mcp import MCPBinding, build_request
from simplex_protocols.chat_call import build_reply
from simplex_protocols.limits import MAX_CHAT_MESSAGE_BYTES, MAX_SERVICE_JSON_BYTES
from simplex_protocols.rpc import check_service_size, success_response

REVISION = "2026-07-28"
ALICE = Caller("chat:@17", TransportKind.CHAT, display_name="alice", contact_id=17)
MEMBER = Caller("chat:#3/9", TransportKind.CHAT, group_id=3, group_member_id=9, in_group=True)
SIGNED = Caller("rpc:MCowBQYDK2VwAyEA-signed", TransportKind.RPC, signer_key="MCowBQYDK2VwAyEA")
COMMAND = "/_call mcp " + "x" * 300


# ---------------------------------------------------------------------------- a made-up server


class Upstream:
    """A server's own list, in pages of ``page_size`` items (all at once for ``None``)."""

    def __init__(self, items: Sequence[Any], page_size: int | None, key: str = "tools") -> None:
        self.items = list(items)
        self.page_size = page_size
        self.key = key
        self.reads = 0

    async def fetch(self, cursor: str | None) -> dict[str, Any]:
        self.reads += 1
        start = 0 if cursor is None else int(cursor.removeprefix("up-"))
        end = len(self.items) if self.page_size is None else start + self.page_size
        result: dict[str, Any] = {"_meta": {"server": "made-up"}, self.key: self.items[start:end]}
        if end < len(self.items):
            result["nextCursor"] = f"up-{end}"
        return result


def fits(response: Mapping[str, Any], measure: PageMeasure, quoted: str, in_group: bool) -> bool:
    """Whether the transport itself takes the response, by its own rules."""
    if measure.transport == "rpc":
        return check_service_size(
            success_response(dict(response)), kind="response"
        ).within_recommended
    reply = build_reply(dict(response), command_item_id=1, command_text=quoted, in_group=in_group)
    return reply.size <= MAX_CHAT_MESSAGE_BYTES


async def all_pages(
    upstream: Upstream, measure: PageMeasure, method: str = "tools/list"
) -> list[Page]:
    pages: list[Page] = []
    cursor: PageCursor | None = None
    while True:
        page = await next_page(method, cursor, request_id=7, fetch=upstream.fetch, measure=measure)
        assert isinstance(page, Page), page
        pages.append(page)
        following = page.response["result"].get("nextCursor")
        if following is None:
            return pages
        cursor = decode_cursor(following, method)
        assert len(pages) < 10_000


def tool(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


# Text that makes the two encodings differ: escapes count in a chat reply, not over RPC, and
# non-ASCII takes several bytes in both.
descriptions = st.text(
    alphabet=st.sampled_from(["a", "b", " ", '"', "\\", "\n", "\x01", "é", "😀", "/"]),
    max_size=1500,
)
items_strategy = st.lists(
    st.builds(tool, st.text(alphabet="abcdefgh", min_size=1, max_size=12), descriptions),
    max_size=60,
)


@pytest.mark.requirement("RPC-LIM-3", "CALL-SIZE-2")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=items_strategy,
    page_size=st.one_of(st.none(), st.integers(min_value=1, max_value=25)),
    transport=st.sampled_from(["rpc", "chat"]),
    in_group=st.booleans(),
)
def test_every_page_fits_and_the_pages_give_the_list_back_in_order(
    items: list[dict[str, Any]], page_size: int | None, transport: str, in_group: bool
) -> None:
    measure = rpc_measure() if transport == "rpc" else chat_measure(COMMAND, in_group=in_group)
    upstream = Upstream(items, page_size)
    pages = anyio.run(all_pages, upstream, measure)
    got = [item for page in pages for item in page.response["result"]["tools"]]
    assert got == items
    for page in pages:
        assert page.size == measure.size(page.response)  # the incremental count is exact
        assert page.size <= measure.limit
        assert fits(page.response, measure, COMMAND, in_group)
        assert page.response["id"] == 7
        assert page.response["result"]["_meta"] == {"server": "made-up"}
    # A page ends only where the next item would not fit: no page but the last is short of
    # room for the item that follows it.
    for page, following in itertools.pairwise(pages):
        first_next = following.response["result"]["tools"][:1]
        if first_next:
            assert page.size + measure.item(first_next[0]) + 1 > measure.limit - 200


@pytest.mark.anyio
async def test_a_list_that_fits_is_one_page_with_no_cursor() -> None:
    items = [tool(f"t{i}", "short") for i in range(5)]
    page = await next_page(
        "tools/list", None, request_id=1, fetch=Upstream(items, None).fetch, measure=rpc_measure()
    )
    assert isinstance(page, Page)
    assert page.response == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"_meta": {"server": "made-up"}, "tools": items},
    }


@pytest.mark.anyio
async def test_server_pages_are_followed_and_joined_into_one_page() -> None:
    items = [tool(f"t{i}", "short") for i in range(30)]
    upstream = Upstream(items, 4)
    page = await next_page(
        "tools/list", None, request_id=1, fetch=upstream.fetch, measure=rpc_measure()
    )
    assert isinstance(page, Page)
    assert page.response["result"]["tools"] == items
    assert "nextCursor" not in page.response["result"]
    assert upstream.reads == 8


@pytest.mark.anyio
async def test_server_pages_of_nothing_end_a_page_after_the_most_reads() -> None:
    class Empty(Upstream):
        async def fetch(self, cursor: str | None) -> dict[str, Any]:
            self.reads += 1
            return {"tools": [], "nextCursor": f"up-{self.reads}"}

    upstream = Empty([], None)
    page = await next_page(
        "tools/list", None, request_id=1, fetch=upstream.fetch, measure=rpc_measure()
    )
    assert isinstance(page, Page)
    assert upstream.reads == MAX_UPSTREAM_PAGES
    assert page.response["result"]["tools"] == []
    following = decode_cursor(page.response["result"]["nextCursor"], "tools/list")
    assert following == PageCursor("tools/list", f"up-{MAX_UPSTREAM_PAGES}", 0)


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-7")
async def test_an_item_too_large_for_any_page_is_reported_not_cut() -> None:
    big = tool("big", "d" * 12_000)  # over 10,000 bytes, under a chat message
    items = [tool("a", "short"), big, tool("c", "short")]
    upstream = Upstream(items, None)
    first = await next_page(
        "tools/list", None, request_id=1, fetch=upstream.fetch, measure=rpc_measure()
    )
    assert isinstance(first, Page)
    assert first.response["result"]["tools"] == [items[0]]
    cursor = decode_cursor(first.response["result"]["nextCursor"], "tools/list")
    refused = await next_page(
        "tools/list", cursor, request_id=1, fetch=upstream.fetch, measure=rpc_measure()
    )
    assert isinstance(refused, ItemTooLarge)
    assert refused.limit == MAX_SERVICE_JSON_BYTES
    assert refused.size > MAX_SERVICE_JSON_BYTES
    # The same position in a conversation, where the item fits.
    rest = await next_page(
        "tools/list",
        cursor,
        request_id=1,
        fetch=upstream.fetch,
        measure=chat_measure(COMMAND, in_group=False),
    )
    assert isinstance(rest, Page)
    assert rest.response["result"]["tools"] == items[1:]


@pytest.mark.anyio
async def test_a_server_result_that_cannot_be_paged_is_an_upstream_error() -> None:
    async def no_list(cursor: str | None) -> dict[str, Any]:
        return {"tools": "none"}

    async def bad_cursor(cursor: str | None) -> dict[str, Any]:
        return {"tools": [], "nextCursor": 5}

    for fetch in (no_list, bad_cursor):
        with pytest.raises(UpstreamListError):
            await next_page("tools/list", None, request_id=1, fetch=fetch, measure=rpc_measure())


@pytest.mark.anyio
async def test_an_offset_past_the_servers_page_is_an_invalid_cursor() -> None:
    upstream = Upstream([tool("a", "x")], None)
    with pytest.raises(CursorError):
        await next_page(
            "tools/list",
            PageCursor("tools/list", None, 2),
            request_id=1,
            fetch=upstream.fetch,
            measure=rpc_measure(),
        )


# ---------------------------------------------------------------------------- cursors


@given(
    method=st.sampled_from(sorted(LIST_METHODS)),
    upstream=st.one_of(st.none(), st.text(max_size=300)),
    offset=st.integers(min_value=0, max_value=10**12),
)
def test_a_cursor_reads_back_as_the_position_it_names(
    method: str, upstream: str | None, offset: int
) -> None:
    cursor = PageCursor(method, upstream, offset)
    text = encode_cursor(cursor)
    assert text.isascii()
    assert decode_cursor(text, method) == cursor


@given(
    text=st.one_of(
        st.text(max_size=200),
        st.binary(max_size=200).map(lambda raw: base64.urlsafe_b64encode(raw).decode().rstrip("=")),
    )
)
def test_any_text_is_a_cursor_of_ours_or_refused(text: str) -> None:
    try:
        cursor = decode_cursor(text, "tools/list")
    except CursorError as exc:
        assert exc.reason
    else:
        assert encode_cursor(cursor) == text


def b64(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


GOOD = encode_cursor(PageCursor("tools/list", "up-4", 2))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(None, id="null"),
        pytest.param(3, id="number"),
        pytest.param("", id="empty"),
        pytest.param(GOOD + "=", id="padded"),
        pytest.param(GOOD[:-1] + "+", id="plain-base64-character"),
        pytest.param(b64('{"v":1,"m":"tools/list","u":null}'), id="no-offset"),
        pytest.param(b64('{"v":1,"m":"tools/list","u":null,"o":-1}'), id="negative-offset"),
        pytest.param(b64('{"v":1,"m":"tools/list","u":null,"o":true}'), id="boolean-offset"),
        pytest.param(b64('{"v":1,"m":"tools/list","u":null,"o":1.0}'), id="float-offset"),
        pytest.param(b64('{"v":2,"m":"tools/list","u":null,"o":0}'), id="other-version"),
        pytest.param(b64('{"v":1,"m":"prompts/list","u":null,"o":0}'), id="other-method"),
        pytest.param(b64('{"v":1,"m":"tools/list","u":7,"o":0}'), id="upstream-not-text"),
        pytest.param(b64('{"v":1,"m":"tools/list","u":null,"o":0,"x":1}'), id="extra-key"),
        pytest.param(b64('{"v": 1, "m": "tools/list", "u": null, "o": 0}'), id="spaced"),
        pytest.param(b64('{"v":1,"v":1,"m":"tools/list","u":null,"o":0}'), id="duplicate-key"),
        pytest.param(b64("[1]"), id="not-an-object"),
        pytest.param("A" * 20_000, id="too-long"),
        pytest.param("not a cursor!", id="not-base64url"),
    ],
)
def test_a_cursor_that_is_not_ours_is_refused(text: object) -> None:
    with pytest.raises(CursorError):
        decode_cursor(text, "tools/list")


# ---------------------------------------------------------------------------- through the binding


def list_request(method: str, cursor: str | None = None, rid: int = 1) -> dict[str, Any]:
    params = {"cursor": cursor} if cursor is not None else None
    return build_request(method, params, request_id=rid, revision=REVISION)


def many_tools(count: int, description_bytes: int = 300) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("many")
    for i in range(count):

        def echo(text: str) -> str:
            return text

        server.add_tool(echo, name=f"tool_{i:03d}", description=f"{i} " + "d" * description_bytes)
    return server


def paging_server(page_size: int, count: int = 50) -> Server[Any]:
    """A lowlevel server that pages each of its four lists itself, ``page_size`` at a time."""

    def window(params: PaginatedRequestParams | None) -> tuple[int, int, str | None]:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = min(start + page_size, count)
        return start, end, str(end) if end < count else None

    async def tools(ctx: ServerRequestContext[Any, Any], p: PaginatedRequestParams | None) -> Any:
        s, e, nxt = window(p)
        made = [
            Tool(name=f"t{i}", description="x" * 400, input_schema={"type": "object"})
            for i in range(s, e)
        ]
        return ListToolsResult(tools=made, next_cursor=nxt)

    async def resources(
        ctx: ServerRequestContext[Any, Any], p: PaginatedRequestParams | None
    ) -> Any:
        s, e, nxt = window(p)
        made = [
            Resource(name=f"r{i}", uri=f"file:///r/{i}", description="y" * 400) for i in range(s, e)
        ]
        return ListResourcesResult(resources=made, next_cursor=nxt)

    async def templates(
        ctx: ServerRequestContext[Any, Any], p: PaginatedRequestParams | None
    ) -> Any:
        s, e, nxt = window(p)
        made = [
            ResourceTemplate(
                name=f"rt{i}", uri_template=f"file:///t/{i}/{{x}}", description="z" * 400
            )
            for i in range(s, e)
        ]
        return ListResourceTemplatesResult(resource_templates=made, next_cursor=nxt)

    async def prompts(ctx: ServerRequestContext[Any, Any], p: PaginatedRequestParams | None) -> Any:
        s, e, nxt = window(p)
        made = [Prompt(name=f"p{i}", description="w" * 400) for i in range(s, e)]
        return ListPromptsResult(prompts=made, next_cursor=nxt)

    return Server(
        "paging",
        on_list_tools=tools,
        on_list_resources=resources,
        on_list_resource_templates=templates,
        on_list_prompts=prompts,
    )


async def over_rpc(binding: MCPBinding, req: dict[str, Any]) -> dict[str, Any] | EnvelopeOutcome:
    with anyio.fail_after(5):
        return await binding.handle_rpc(req, SIGNED, budget_s=60)


async def over_chat(binding: MCPBinding, req: dict[str, Any], caller: Caller) -> dict[str, Any]:
    """The one reply of a list call, checked against the chat transport's own size rule."""
    command = "/_call mcp " + _wire.dumps(req)
    replies: list[dict[str, Any]] = []

    async def emit(message: dict[str, Any]) -> None:
        reply = build_reply(
            message,
            command_item_id=1,
            command_text=command,
            in_group=caller.in_group,
            oversize=binding.oversize_error,
        )
        replies.append(_wire.loads(reply.text))

    with anyio.fail_after(5):
        await binding.handle_chat(req, caller, emit)
    [reply] = replies
    return reply


async def every_page(
    binding: MCPBinding, method: str, transport: str, caller: Caller = ALICE
) -> tuple[list[Any], int]:
    key = LIST_METHODS[method]
    got: list[Any] = []
    cursor: str | None = None
    pages = 0
    while True:
        req = list_request(method, cursor, rid=pages + 1)
        if transport == "rpc":
            answer = await over_rpc(binding, req)
            assert isinstance(answer, dict), answer
            assert check_service_size(success_response(answer), kind="response").within_recommended
        else:
            answer = await over_chat(binding, req, caller)
        assert "result" in answer, answer
        assert answer["id"] == pages + 1
        pages += 1
        got.extend(answer["result"][key])
        cursor = answer["result"].get("nextCursor")
        if cursor is None:
            return got, pages


async def unpaged(server: MCPServer[Any]) -> list[dict[str, Any]]:
    """The server's list as the SDK serves it, with no size limit."""
    tools = await server.list_tools()
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


@pytest.mark.anyio
@pytest.mark.requirement("RPC-LIM-3", "CALL-SIZE-2")
@pytest.mark.parametrize("transport", ["rpc", "chat"])
@pytest.mark.parametrize("caller", [ALICE, MEMBER], ids=["direct", "group"])
async def test_two_hundred_tools_are_listed_in_pages_that_fit(
    transport: str, caller: Caller
) -> None:
    server = many_tools(200)
    async with MCPBinding(server) as binding:
        got, pages = await every_page(binding, "tools/list", transport, caller)
    assert [t["name"] for t in got] == [f"tool_{i:03d}" for i in range(200)]
    assert got == await unpaged(many_tools(200))
    assert pages > 1


@pytest.mark.anyio
@pytest.mark.parametrize("method", sorted(LIST_METHODS))
@pytest.mark.parametrize("transport", ["rpc", "chat"])
@pytest.mark.parametrize("page_size", [1, 7, 50])
async def test_every_list_method_is_paged_whatever_page_size_the_server_uses(
    method: str, transport: str, page_size: int
) -> None:
    async with MCPBinding(paging_server(page_size)) as binding:
        got, _ = await every_page(binding, method, transport)
    assert [item["name"] for item in got] == [
        f"{prefix}{i}"
        for prefix in [
            {
                "tools/list": "t",
                "resources/list": "r",
                "resources/templates/list": "rt",
                "prompts/list": "p",
            }[method]
        ]
        for i in range(50)
    ]


@pytest.mark.anyio
async def test_a_cursor_made_over_one_transport_goes_on_over_the_other() -> None:
    async with MCPBinding(many_tools(60)) as binding:
        first = await over_rpc(binding, list_request("tools/list"))
        assert isinstance(first, dict)
        cursor = first["result"]["nextCursor"]
        rest = await over_chat(binding, list_request("tools/list", cursor), ALICE)
    names = [t["name"] for t in first["result"]["tools"] + rest["result"]["tools"]]
    assert names[: len(first["result"]["tools"])] == [
        f"tool_{i:03d}" for i in range(len(first["result"]["tools"]))
    ]
    assert len(set(names)) == len(names)


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["rpc", "chat"])
@pytest.mark.parametrize(
    "cursor",
    [
        "bogus",
        b64('{"v":1,"m":"prompts/list","u":null,"o":0}'),
        encode_cursor(PageCursor("tools/list", None, 999)),
    ],
    ids=["not-ours", "other-method", "past-the-end"],
)
async def test_a_bad_cursor_is_invalid_params(transport: str, cursor: str) -> None:
    async with MCPBinding(many_tools(3)) as binding:
        req = list_request("tools/list", cursor)
        if transport == "rpc":
            answer = await over_rpc(binding, req)
            assert isinstance(answer, dict)
        else:
            answer = await over_chat(binding, req, ALICE)
    assert answer["id"] == 1
    assert answer["error"]["code"] == -32602
    assert isinstance(answer["error"]["data"], str)


@pytest.mark.anyio
async def test_a_null_cursor_is_the_first_page() -> None:
    async with MCPBinding(many_tools(3)) as binding:
        answer = await over_rpc(binding, list_request("tools/list"))
        req = list_request("tools/list")
        req["params"]["cursor"] = None
        again = await over_rpc(binding, req)
    assert isinstance(answer, dict) and isinstance(again, dict)
    assert again["result"]["tools"] == answer["result"]["tools"]


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-7", "RPC-ERR-7")
async def test_a_tool_too_large_for_service_rpc_is_too_large_there_and_fits_in_a_chat() -> None:
    server = many_tools(2)
    server.add_tool(lambda: "", name="huge", description="h" * 11_000)
    async with MCPBinding(server) as binding:
        first = await over_rpc(binding, list_request("tools/list"))
        assert isinstance(first, dict)
        assert [t["name"] for t in first["result"]["tools"]] == ["tool_000", "tool_001"]
        cursor = first["result"]["nextCursor"]
        refused = await over_rpc(binding, list_request("tools/list", cursor))
        assert isinstance(refused, EnvelopeOutcome)
        assert refused.code == "too_large"
        rest = await over_chat(binding, list_request("tools/list", cursor), ALICE)
    assert [t["name"] for t in rest["result"]["tools"]] == ["huge"]
    assert "nextCursor" not in rest["result"]


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MSG-7")
async def test_a_tool_too_large_for_a_chat_message_is_the_oversize_error_there() -> None:
    server = many_tools(0)
    server.add_tool(lambda: "", name="enormous", description="h" * 16_000)
    async with MCPBinding(server) as binding:
        reply = await over_chat(binding, list_request("tools/list", rid=5), ALICE)
        refused = await over_rpc(binding, list_request("tools/list"))
    assert reply == binding.oversize_error({"id": 5})
    assert reply["error"]["code"] == -32603
    assert isinstance(refused, EnvelopeOutcome) and refused.code == "too_large"


# ---------------------------------------------------------------------------- snapshots


def counting_server(
    names: list[str] | None = None, *, per_caller: bool = False
) -> tuple[Server[Any], list[str]]:
    """A lowlevel server that lists ``names`` (200 tools by default) whole, as an unpaged
    server does, and records the caller key of each call of its list handler.

    With ``per_caller`` each caller sees tools named after its own key.
    """
    listed = names if names is not None else [f"tool_{i:03d}" for i in range(200)]
    calls: list[str] = []

    async def tools(ctx: ServerRequestContext[Any, Any], p: PaginatedRequestParams | None) -> Any:
        caller = caller_of(ctx)
        assert caller is not None
        calls.append(caller.key)
        prefix = caller.key.replace(":", "_").replace("@", "").replace("#", "") + "_"
        made = [
            Tool(
                name=(prefix if per_caller else "") + name,
                description="d" * 300,
                input_schema={"type": "object"},
            )
            for name in listed
        ]
        return ListToolsResult(tools=made)

    return Server("counting", on_list_tools=tools), calls


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["rpc", "chat"])
async def test_the_server_is_asked_once_for_its_list_across_all_pages(transport: str) -> None:
    server, calls = counting_server()
    async with MCPBinding(server) as binding:
        got, pages = await every_page(binding, "tools/list", transport)
    assert [t["name"] for t in got] == [f"tool_{i:03d}" for i in range(200)]
    assert pages > 5
    assert len(calls) == 1


@pytest.mark.anyio
async def test_a_new_listing_asks_the_server_again() -> None:
    server, calls = counting_server()
    async with MCPBinding(server) as binding:
        await every_page(binding, "tools/list", "chat")
        await every_page(binding, "tools/list", "chat")
    assert len(calls) == 2


@pytest.mark.anyio
async def test_a_server_that_pages_itself_is_asked_once_for_each_of_its_pages() -> None:
    asked: list[str | None] = []
    server = paging_server(7)
    inner = server.get_request_handler("tools/list")
    assert inner is not None

    async def counted(ctx: ServerRequestContext[Any, Any], p: PaginatedRequestParams | None) -> Any:
        asked.append(p.cursor if p is not None else None)
        return await inner.handler(ctx, p)

    server.add_request_handler("tools/list", PaginatedRequestParams, counted)
    async with MCPBinding(server) as binding:
        got, pages = await every_page(binding, "tools/list", "rpc")
    assert len(got) == 50
    assert pages > 1
    assert len(asked) == len(set(asked)) == 8  # 50 items, 7 a page


def tools_server_that_grows() -> MCPServer[Any]:
    """An MCPServer of 60 tools, and a tool ``grow`` that adds one and says the list changed."""
    server = many_tools(60)

    async def grow(ctx: Context) -> str:
        server.add_tool(lambda: "", name="aaa_new", description="new")
        await ctx.notify_tools_changed()
        return "grown"

    server.add_tool(grow, name="grow", description="adds a tool")
    return server


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["rpc", "chat"])
async def test_a_list_changed_between_pages_makes_the_next_cursor_invalid(transport: str) -> None:
    async with MCPBinding(tools_server_that_grows()) as binding:
        first = await over_rpc(binding, list_request("tools/list"))
        assert isinstance(first, dict)
        cursor = first["result"]["nextCursor"]
        call = build_request(
            "tools/call", {"name": "grow", "arguments": {}}, request_id=2, revision=REVISION
        )
        grown = await over_chat(binding, call, ALICE)
        assert grown["result"]["content"][0]["text"] == "grown"
        req = list_request("tools/list", cursor, rid=3)
        if transport == "rpc":
            answer = await over_rpc(binding, req)
            assert isinstance(answer, dict)
        else:
            answer = await over_chat(binding, req, SIGNED)
        # Listed again from the start, the new tool is there.
        again, _ = await every_page(binding, "tools/list", transport)
    assert answer["id"] == 3
    assert answer["error"]["code"] == -32602
    assert "changed" in answer["error"]["data"]
    assert [t["name"] for t in again][-2:] == ["grow", "aaa_new"]


@pytest.mark.anyio
async def test_a_list_changed_silently_is_kept_as_it_was_until_the_snapshot_expires() -> None:
    names = [f"tool_{i:03d}" for i in range(60)]
    server, calls = counting_server(names)
    clock = ManualClock()
    async with MCPBinding(server, clock=clock) as binding:
        first = await over_chat(binding, list_request("tools/list"), ALICE)
        cursor = first["result"]["nextCursor"]
        names.insert(0, "aaa_new")  # no list_changed: the binding cannot know
        second = await over_chat(binding, list_request("tools/list", cursor), ALICE)
        assert len(calls) == 1
        # The rest of the list as it was when the listing started: no item twice, none lost.
        listed = first["result"]["tools"] + second["result"]["tools"]
        assert [t["name"] for t in listed] == names[1 : 1 + len(listed)]
        await clock.advance(SNAPSHOT_TTL_S + 1)
        late = await over_chat(binding, list_request("tools/list", cursor, rid=3), ALICE)
    assert len(calls) == 2
    assert late["error"]["code"] == -32602


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["rpc", "chat"])
async def test_an_expired_snapshot_of_an_unchanged_list_goes_on_from_the_server(
    transport: str,
) -> None:
    server, calls = counting_server()
    clock = ManualClock()
    async with MCPBinding(server, clock=clock) as binding:
        key = "tools"
        got: list[Any] = []
        cursor: str | None = None
        rid = 0
        while True:
            rid += 1
            req = list_request("tools/list", cursor, rid=rid)
            if transport == "rpc":
                answer = await over_rpc(binding, req)
                assert isinstance(answer, dict)
            else:
                answer = await over_chat(binding, req, ALICE)
            got.extend(answer["result"][key])
            cursor = answer["result"].get("nextCursor")
            if cursor is None:
                break
            if rid == 2:
                await clock.advance(SNAPSHOT_TTL_S)
    assert [t["name"] for t in got] == [f"tool_{i:03d}" for i in range(200)]
    assert len(calls) == 2


@pytest.mark.anyio
async def test_two_callers_never_share_a_snapshot() -> None:
    server, calls = counting_server([f"t{i:03d}" for i in range(80)], per_caller=True)
    async with MCPBinding(server) as binding:
        alice, _ = await every_page(binding, "tools/list", "chat", ALICE)
        member, _ = await every_page(binding, "tools/list", "chat", MEMBER)
        first = await over_chat(binding, list_request("tools/list"), ALICE)
        # The member presents Alice's cursor: the server is asked for the member's list, which
        # is not the list the cursor was made on.
        stolen = await over_chat(
            binding, list_request("tools/list", first["result"]["nextCursor"]), MEMBER
        )
    assert all(t["name"].startswith("chat_17_") for t in alice)
    assert all(t["name"].startswith("chat_3/9_") for t in member)
    assert len(alice) == len(member) == 80
    assert calls == ["chat:@17", "chat:#3/9", "chat:@17", "chat:#3/9"]
    assert stolen["error"]["code"] == -32602


def server_page(size: int, version: str = "0" * 16) -> ServerPage:
    return ServerPage((), None, {}, version, size)


def test_snapshots_stay_within_their_entries_and_bytes_the_least_recently_used_going_first() -> (
    None
):
    kept = ListSnapshots(ttl_s=30, max_entries=3, max_bytes=1000)
    for i in range(3):
        kept.put("alice", "tools/list", f"c{i}", server_page(100), now=0)
    assert kept.get("alice", "tools/list", "c0", "0" * 16, now=1) is not None  # c0 used
    kept.put("alice", "tools/list", "c3", server_page(100), now=1)
    assert kept.entries == 3
    assert kept.get("alice", "tools/list", "c1", "0" * 16, now=1) is None  # the oldest
    assert kept.get("alice", "tools/list", "c0", "0" * 16, now=1) is not None
    kept.put("alice", "tools/list", "big", server_page(900), now=1)
    # c2 and then c3 went, the least recently used; c0 was read last.
    assert kept.size == 1000
    assert kept.get("alice", "tools/list", "c3", "0" * 16, now=1) is None
    assert kept.get("alice", "tools/list", "c0", "0" * 16, now=1) is not None
    assert kept.entries == 2
    kept.put("alice", "tools/list", "huge", server_page(1001), now=1)
    assert kept.get("alice", "tools/list", "huge", "0" * 16, now=1) is None
    assert kept.size <= 1000


def test_a_snapshot_is_found_only_by_its_owner_method_cursor_and_version_before_it_expires() -> (
    None
):
    kept = ListSnapshots(ttl_s=30)
    page = server_page(10, "ab" * 8)
    kept.put("alice", "tools/list", None, page, now=100)
    assert kept.get("alice", "tools/list", None, "ab" * 8, now=129.9) is page
    assert kept.get("bob", "tools/list", None, "ab" * 8, now=100) is None
    assert kept.get("alice", "prompts/list", None, "ab" * 8, now=100) is None
    assert kept.get("alice", "tools/list", "c", "ab" * 8, now=100) is None
    assert kept.get("alice", "tools/list", None, "cd" * 8, now=100) is None
    assert kept.get("alice", "tools/list", None, "ab" * 8, now=130) is None
    assert kept.entries == 0 and kept.size == 0


def test_dropping_a_method_forgets_its_pages_of_every_owner_only() -> None:
    kept = ListSnapshots()
    for owner in ("alice", "bob"):
        for method in LIST_METHODS:
            kept.put(owner, method, None, server_page(10), now=0)
    kept.drop(["tools/list"])
    assert kept.entries == 6
    assert kept.get("bob", "tools/list", None, "0" * 16, now=0) is None
    assert kept.get("bob", "prompts/list", None, "0" * 16, now=0) is not None
    kept.drop()
    assert kept.entries == 0 and kept.size == 0


def test_expired_snapshots_are_let_go_when_another_is_kept() -> None:
    kept = ListSnapshots(ttl_s=30)
    for i in range(10):
        kept.put(f"caller{i}", "tools/list", None, server_page(10), now=0)
    kept.put("late", "tools/list", None, server_page(10), now=31)
    assert kept.entries == 1 and kept.size == 10


@pytest.mark.parametrize("bound", ["ttl_s", "max_entries", "max_bytes"])
def test_snapshot_bounds_must_be_positive(bound: str) -> None:
    with pytest.raises(ValueError):
        ListSnapshots(**{bound: 0})


@pytest.mark.anyio
async def test_many_callers_keep_the_binding_within_its_bounds() -> None:
    server, calls = counting_server()
    async with MCPBinding(server) as binding:
        for i in range(300):
            caller = Caller(f"chat:@{i}", TransportKind.CHAT, contact_id=i)
            await over_chat(binding, list_request("tools/list"), caller)
        kept = binding._list_snapshots
        assert kept.entries <= 256
        assert kept.size <= 8_000_000
    assert len(calls) == 300


def test_the_version_of_a_server_page_is_of_its_items_and_cursor_only() -> None:
    one = read_server_page({"tools": [tool("a", "x")], "_meta": {"at": 1}}, "tools")
    same = read_server_page({"tools": [tool("a", "x")], "_meta": {"at": 2}}, "tools")
    other = read_server_page({"tools": [tool("b", "x")], "_meta": {"at": 1}}, "tools")
    paged = read_server_page({"tools": [tool("a", "x")], "nextCursor": "n"}, "tools")
    assert one.version == same.version
    assert len({one.version, other.version, paged.version}) == 3
    assert decode_cursor(
        encode_cursor(PageCursor("tools/list", None, 1, one.version)), "tools/list"
    )


@pytest.mark.anyio
async def test_a_pinned_cursor_of_a_server_page_that_changed_is_invalid() -> None:
    items = [tool(f"t{i}", "d" * 500) for i in range(60)]
    upstream = Upstream(items, None)
    first = await next_page(
        "tools/list", None, request_id=1, fetch=upstream.fetch, measure=rpc_measure()
    )
    assert isinstance(first, Page)
    cursor = decode_cursor(first.response["result"]["nextCursor"], "tools/list")
    assert cursor.snapshot is not None
    unchanged = await next_page(
        "tools/list", cursor, request_id=2, fetch=upstream.fetch, measure=rpc_measure()
    )
    assert isinstance(unchanged, Page)
    assert unchanged.response["result"]["tools"][0] == items[first.items]
    upstream.items.pop(0)
    with pytest.raises(CursorError, match="changed"):
        await next_page(
            "tools/list", cursor, request_id=3, fetch=upstream.fetch, measure=rpc_measure()
        )


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(b64('{"v":1,"m":"tools/list","u":null,"o":0}'), id="version-1"),
        pytest.param(b64('{"v":2,"m":"tools/list","u":null,"o":0,"s":"xyz"}'), id="bad-version"),
        pytest.param(b64('{"v":2,"m":"tools/list","u":null,"o":0,"s":7}'), id="number-version"),
        pytest.param(
            b64('{"v":2,"m":"tools/list","u":null,"o":0,"s":"' + "A" * 16 + '"}'),
            id="upper-case-version",
        ),
        pytest.param(b64('{"v":2,"m":"prompts/list","u":null,"o":0,"s":null}'), id="other-method"),
    ],
)
def test_a_cursor_of_another_format_or_with_a_bad_version_is_refused(text: str) -> None:
    with pytest.raises(CursorError):
        decode_cursor(text, "tools/list")
