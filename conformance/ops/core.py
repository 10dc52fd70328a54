"""Vector operations of the chat core's Service RPC commands (``spec/vectors/core/``).

- ``core.service_request_command``: ``{"user_id", "target", "request", "timeout_s"?,
  "sign_key"?}`` → the ``/_service_request`` command a requester sends (RPC-CMD-1): without
  ``timeout_s`` the command has no ``timeout=`` and the core waits its default 30 s
  (RPC-CMD-2); ``sign_key`` hands the core the requester's private key (RPC-CMD-4).

Error codes: the command builder's (``bad_id``, ``bad_token``, ``bad_timeout``,
``not_an_object``...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols.errors import CommandArgumentError, ParseError

from . import op

__all__: list[str] = []


@op("core.service_request_command")
def service_request_command(value: Any, args: Mapping[str, Any]) -> str:
    """The ``/_service_request`` command text."""
    from simplex_protocols.core import commands  # the core client: imported on first use

    try:
        return commands.send_service_request(
            value["user_id"],
            value["target"],
            value["request"],
            timeout_s=value.get("timeout_s"),
            sign_key=value.get("sign_key"),
        )
    except CommandArgumentError as exc:
        raise ParseError(str(exc), code=exc.code) from exc
