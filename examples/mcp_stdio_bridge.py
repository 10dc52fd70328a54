"""Expose an existing MCP server, started as a stdio command, over SimpleX, without changing it.

The bridge starts the command with the ``mcp`` SDK's stdio client, learns what the server
offers (tools, resources, prompts), and serves the same over SimpleX: each request that
arrives as ``/_call mcp ...`` or over Service RPC is forwarded to the stdio server, and its
answer goes back. Progress notifications of a tool call are passed on as replies in a
conversation, and a multi-round-trip result (``input_required``) goes back to the SimpleX
caller as it came.

Everything after ``--`` is the command of the MCP server::

    python examples/mcp_stdio_bridge.py --core ws://127.0.0.1:5225 --display-name Files \\
        -- npx -y @modelcontextprotocol/server-filesystem /srv/share

    python examples/mcp_stdio_bridge.py --core ws://127.0.0.1:5226/notes \\
        -- python tests/examples/stdio_server.py

or in this process alone, calling itself once over each transport::

    python examples/mcp_stdio_bridge.py --core sim:notes --demo \\
        -- python tests/examples/stdio_server.py

Stop it with Ctrl-C (the stdio server is stopped with the bridge).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _demo

from simplex_protocols.bindings.mcp import is_final
from simplex_protocols.bot import ResponderBot, configure_bot_logging


def forwarding_server(client: Client, name: str) -> Server[Any]:
    """A lowlevel MCP server that answers each request by asking ``client``'s server.

    Only what the stdio server declares is served, so that ``server/discover`` tells callers
    the same capabilities.
    """
    caps = client.server_capabilities
    handlers: dict[str, Any] = {}

    if caps.tools is not None:

        async def list_tools(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return await client.list_tools(cursor=params.cursor if params else None)

        async def call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult | types.InputRequiredResult:
            async def progress(value: float, total: float | None, message: str | None) -> None:
                await ctx.session.report_progress(value, total, message)

            return await client.session.call_tool(
                params.name,
                params.arguments,
                progress_callback=progress,
                input_responses=params.input_responses,
                request_state=params.request_state,
                allow_input_required=True,
            )

        handlers |= {"on_list_tools": list_tools, "on_call_tool": call_tool}

    if caps.resources is not None:

        async def list_resources(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListResourcesResult:
            return await client.list_resources(cursor=params.cursor if params else None)

        async def list_templates(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListResourceTemplatesResult:
            return await client.list_resource_templates(cursor=params.cursor if params else None)

        async def read_resource(
            ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
        ) -> types.ReadResourceResult:
            return await client.read_resource(str(params.uri))

        handlers |= {
            "on_list_resources": list_resources,
            "on_list_resource_templates": list_templates,
            "on_read_resource": read_resource,
        }

    if caps.prompts is not None:

        async def list_prompts(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListPromptsResult:
            return await client.list_prompts(cursor=params.cursor if params else None)

        async def get_prompt(
            ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
        ) -> types.GetPromptResult:
            return await client.get_prompt(params.name, params.arguments)

        handlers |= {"on_list_prompts": list_prompts, "on_get_prompt": get_prompt}

    info = client.server_info
    return Server(
        name,
        version=info.version if info is not None else None,
        instructions=client.instructions,
        **handlers,
    )


@asynccontextmanager
async def open_bridge(
    command: Sequence[str],
    *,
    display_name: str,
    data_dir: str | os.PathLike[str] | None = None,
    log_contents: bool = False,
    **bot_options: Any,
) -> AsyncIterator[ResponderBot]:
    """Start the stdio MCP server ``command`` and make a bot that forwards to it.

    The stdio server runs as long as the block; serve the bot inside it.
    """
    if not command:
        raise ValueError("give the MCP server's command after --")
    executable = shutil.which(command[0]) or command[0]
    params = StdioServerParameters(command=executable, args=list(command[1:]))
    async with Client(params, cache=None) as client:
        info = client.server_info
        name = info.name if info is not None and info.name else display_name
        yield ResponderBot(
            display_name=display_name,
            mcp=forwarding_server(client, name),
            description=f"MCP server {name}, over SimpleX.",
            data_dir=data_dir,
            log_contents=log_contents,
            **bot_options,
        )


def parse_args(argv: Sequence[str] | None = None) -> Any:
    p = _demo.parser(__doc__.split("\n\n")[0] if __doc__ else "", name="MCP bridge")
    p.add_argument("command", nargs="+", help="the stdio MCP server's command, after --")
    args = p.parse_args(argv)
    _demo.check_demo(p, args)
    return args


async def demo(bot: ResponderBot) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    await _demo.demo(
        bot,
        protocol="mcp",
        rpc_request={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}},
        chat_request={
            "jsonrpc": "2.0",
            "id": 2,
            "method": "server/discover",
            "params": {"_meta": meta},
        },
        final=is_final,
    )


async def amain(args: Any) -> None:
    async with open_bridge(
        args.command,
        display_name=args.display_name,
        data_dir=args.data_dir,
        log_contents=args.log_contents,
    ) as bot:
        await bot.run_async(args.core, on_ready=demo if args.demo else None)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    configure_bot_logging()
    anyio.run(amain, args)


if __name__ == "__main__":
    main()
