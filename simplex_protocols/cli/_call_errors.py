"""From what went wrong to simplex-call's exit status and message, in one place."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from simplex_protocols.errors import (
    CallFormatError,
    CallTimeoutError,
    CommandArgumentError,
    CoreConnectionError,
    CoreError,
    CoreOptionError,
    DiscoveryError,
    KeyFileError,
    LinkError,
    MessageTooLargeError,
    ParseError,
    ServiceError,
    ServiceTransportError,
    SimplexError,
)

from ._call_args import CLIError, ExitCode

__all__ = ["Failure", "exit_for_jsonrpc_error", "failure_of"]


@dataclass(frozen=True, slots=True)
class Failure:
    """A failure as simplex-call reports it."""

    exit_code: ExitCode
    message: str
    hint: str | None = None
    detail: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.exit_code.slug, "message": self.message}
        if self.hint:
            out["hint"] = self.hint
        if self.detail:
            out.update(self.detail)
        return out


_NOT_FOUND_TAGS: Final = frozenset(
    {"NOT_FOUND", "AUTH", "invalidConnReq", "simplexDomainNotReady", "NO_NAME_SERVERS"}
)
_TIMEOUT_TAGS: Final = frozenset({"TIMEOUT", "timeout"})

_SERVICE_CODES: Final = {
    "unsupported_protocol": ExitCode.NOT_SUPPORTED,
    "unsupported_version": ExitCode.NOT_SUPPORTED,
    "conversation_required": ExitCode.NOT_SUPPORTED,
    "bad_request": ExitCode.REFUSED,
    "too_large": ExitCode.REFUSED,
    "rate_limited": ExitCode.REFUSED,
    "internal": ExitCode.REMOTE_ERROR,
}

_SERVICE_HINTS: Final = {
    "conversation_required": "the request needs a conversation: try --transport chat",
    "rate_limited": "the bot limits how often it answers; try again later",
    "too_large": "the answer is over the Service RPC size limit: try --transport chat",
}

#: JSON-RPC error codes of MCP and A2A answers and the exit status they give.
_JSONRPC_CODES: Final = {
    -32601: ExitCode.NOT_SUPPORTED,  # method not found
    -32602: ExitCode.USAGE,  # invalid params
    -32022: ExitCode.NOT_SUPPORTED,  # MCP: unsupported protocol revision
    -32021: ExitCode.NOT_SUPPORTED,  # MCP: a client capability is missing
    -32009: ExitCode.NOT_SUPPORTED,  # A2A: version not supported
    -32003: ExitCode.NOT_SUPPORTED,  # A2A: push notifications not supported
    -32004: ExitCode.NOT_SUPPORTED,  # A2A: unsupported operation
    -32001: ExitCode.NOT_FOUND,  # A2A: task not found
}


def exit_for_jsonrpc_error(code: Any) -> ExitCode:
    """The exit status of a JSON-RPC error answer (69 unless the code says more)."""
    if isinstance(code, int) and not isinstance(code, bool):
        return _JSONRPC_CODES.get(code, ExitCode.REMOTE_ERROR)
    return ExitCode.REMOTE_ERROR


def _core_failure(exc: CoreError) -> Failure:
    chain = exc.chain
    detail = {"chain": chain}
    if any(tag in _NOT_FOUND_TAGS for tag in chain):
        hint = None
        if "NAME" in chain or "simplexDomainNotReady" in chain:
            hint = "check the SimpleX name, or use the address link"
        elif "AUTH" in chain:
            hint = "the link was deleted or never existed"
        return Failure(ExitCode.NOT_FOUND, exc.describe(), hint, detail)
    if any(tag in _TIMEOUT_TAGS for tag in chain):
        return Failure(ExitCode.TIMED_OUT, exc.describe(), None, detail)
    return Failure(ExitCode.UNAVAILABLE, exc.describe(), None, detail)


def failure_of(exc: BaseException) -> Failure:
    """What simplex-call reports for an exception (anything unexpected is a 70)."""
    if isinstance(exc, CLIError):
        return Failure(exc.exit_code, exc.message, exc.hint)
    if isinstance(exc, CoreOptionError):
        return Failure(ExitCode.USAGE, str(exc))
    if isinstance(exc, DiscoveryError):
        if exc.code in ("bad_url", "insecure_url"):
            return Failure(ExitCode.USAGE, str(exc), detail={"discovery": exc.code})
        if exc.code == "timeout":
            return Failure(ExitCode.TIMED_OUT, str(exc), detail={"discovery": exc.code})
        return Failure(ExitCode.NOT_FOUND, str(exc), detail={"discovery": exc.code})
    if isinstance(exc, LinkError):
        return Failure(
            ExitCode.USAGE,
            f"not a SimpleX link or name: {exc.reason} ({exc.code})",
            "TARGET is a contact address link, a SimpleX name such as @name.simplex, or a website",
        )
    if isinstance(exc, CallTimeoutError):
        return Failure(ExitCode.TIMED_OUT, str(exc), "the bot may still act on the request")
    if isinstance(exc, TimeoutError):
        return Failure(ExitCode.TIMED_OUT, "no answer in time", "the wait is set by --timeout")
    if isinstance(exc, ServiceError):
        code = exc.code if isinstance(exc.code, str) else str(exc.code)
        exit_code = _SERVICE_CODES.get(code, ExitCode.REMOTE_ERROR)
        text = f"the bot answered with the envelope error {code}"
        if exc.message:
            text += f": {exc.message}"
        detail: dict[str, Any] = {"envelopeError": dict(exc.error)}
        return Failure(exit_code, text, _SERVICE_HINTS.get(code), detail)
    if isinstance(exc, ServiceTransportError):
        tag = exc.service_error
        detail = {"serviceError": tag, "chain": exc.chain}
        if tag == "notDRAddress":
            return Failure(
                ExitCode.NOT_SUPPORTED,
                "the address takes no Service RPC requests (it has no ratchet keys)",
                "try --transport chat",
                detail,
            )
        if tag in ("badSignature", "rejected"):
            return Failure(ExitCode.REFUSED, f"the request was refused ({tag})", None, detail)
        return Failure(ExitCode.REMOTE_ERROR, exc.describe(), None, detail)
    if isinstance(exc, MessageTooLargeError):
        return Failure(ExitCode.USAGE, str(exc), "the request is over the size limit")
    if isinstance(exc, CallFormatError | CommandArgumentError):
        return Failure(ExitCode.USAGE, str(exc))
    if isinstance(exc, KeyFileError):
        return Failure(
            ExitCode.UNAVAILABLE,
            f"the key folder cannot be used: {exc}",
            detail={"keyFile": exc.code},
        )
    if isinstance(exc, CoreConnectionError):
        return Failure(ExitCode.UNAVAILABLE, f"the chat core cannot be used: {exc}")
    if isinstance(exc, CoreError):
        return _core_failure(exc)
    if isinstance(exc, ParseError):
        return Failure(ExitCode.REMOTE_ERROR, f"the answer breaks the protocol: {exc}")
    if isinstance(exc, SimplexError):
        return Failure(ExitCode.UNAVAILABLE, f"{type(exc).__name__}: {exc}")
    return Failure(ExitCode.UNAVAILABLE, f"unexpected failure: {type(exc).__name__}: {exc}")
