"""Live checks of a bot: ``simplex-conformance bot TARGET``.

- :func:`all_checks`: every live check (:class:`~simplex_protocols.conformance._model.CheckSpec`), in run order.
- :func:`run_bot` / :func:`run_bot_async`: run them against a bot at a SimpleX address (any
  ``--core``), or against a built-in bot on a fresh simulated network (``builtin=
  "reference"`` or a mutant's name); one :class:`~simplex_protocols.conformance._model.CheckRun` per check and
  transport.
- :func:`mutants`: the catalogue of mutant bots, each breaking one requirement, for the
  selftest.
- :func:`reference_bot`: the suite's reference bot (a ``ResponderBot`` serving the fixture
  profile).
- :func:`run_on_simulator`: the live checks against a bot built by the caller (its own
  ``ResponderBot``), served on a fresh simulated network: a bot author's offline check.
- :class:`CommandOptions`: ``run_bot(CommandOptions(command="node bot.js"))`` starts a bot in
  any language against a simulated core (its WebSocket URL in ``SIMPLEX_CONFORMANCE_CORE``),
  waits for its address, runs the checks and stops it.
- :func:`missing_fixture`: the runs that are ``UNTESTABLE`` because a fixture tool is missing.

See ``docs/conformance-live.md``.
"""

from __future__ import annotations

from ._command import BotOutput as BotOutput
from ._command import BotStartError as BotStartError
from ._command import CommandOptions as CommandOptions
from ._fixture import reference_bot as reference_bot
from ._fixture_names import A2A_PREFIXES as A2A_PREFIXES
from ._fixture_names import FIXTURE_OVERSIZE_CHARS as FIXTURE_OVERSIZE_CHARS
from ._fixture_names import FIXTURE_RATE_LIMIT as FIXTURE_RATE_LIMIT
from ._fixture_names import MCP_TOOLS as MCP_TOOLS
from ._fixture_names import REFERENCE_NAME as REFERENCE_NAME
from ._mutants import mutants as mutants
from ._runner import all_checks as all_checks
from ._runner import missing_fixture as missing_fixture
from ._runner import run_bot as run_bot
from ._runner import run_bot_async as run_bot_async
from ._runner import run_on_simulator as run_on_simulator

__all__ = [
    "A2A_PREFIXES",
    "FIXTURE_OVERSIZE_CHARS",
    "FIXTURE_RATE_LIMIT",
    "MCP_TOOLS",
    "REFERENCE_NAME",
    "BotOutput",
    "BotStartError",
    "CommandOptions",
    "all_checks",
    "missing_fixture",
    "mutants",
    "reference_bot",
    "run_bot",
    "run_bot_async",
    "run_on_simulator",
]
