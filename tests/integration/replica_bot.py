"""One replica of the service ``acme`` as a program of its own, for test_replica_processes.py.

Run as ``python replica_bot.py --core ws://127.0.0.1:PORT/NAME --data DIR --database URL
--name NAME [--rate-limit REQUESTS/SECONDS]``, with the tests folder on ``PYTHONPATH`` (the bot
tests' kit gives it their MCP tools, echo agent and Agent Card). It serves as a bot's program
does (``ResponderBot.run``: SIGINT or SIGTERM stop it gracefully) and prints one JSON line on
standard output once it serves: ``{"address": ..., "replicas": [...]}``, the replicas' addresses
as it read them when it joined, its own first. Its log goes to standard error.
"""

from __future__ import annotations

import argparse

from bot.botkit import EchoAgent, echo_card, make_tools

from simplex_protocols._wire import dumps
from simplex_protocols.bot import ResponderBot
from simplex_protocols.transports import RateLimit


def rate_limit(text: str) -> RateLimit:
    """``REQUESTS/SECONDS`` as a :class:`RateLimit`."""
    requests, _, seconds = text.partition("/")
    return RateLimit(int(requests), float(seconds))


def announce(bot: ResponderBot) -> None:
    line = {"address": bot.address, "replicas": [r.address for r in bot.replicas]}
    print(dumps(line), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--core", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--rate-limit", type=rate_limit)
    args = parser.parse_args(argv)
    bot = ResponderBot(
        display_name=f"Acme {args.name}",
        mcp=make_tools(),
        a2a=EchoAgent(),
        agent_card=echo_card(),
        peer_type="agent",
        data_dir=args.data,
        task_database=args.database,
        service="acme",
        rate_limit=args.rate_limit,
    )
    bot.run(args.core, on_ready=announce)


if __name__ == "__main__":
    main()
