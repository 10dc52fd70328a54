"""Log lines on stdout, errors on stderr, and the wording of SimpleX errors.

:func:`chat_error_text` words a ChatError the way the SimpleX apps word it in their alerts
(the plan's table "SimpleX errors worded by the apps"); any other error becomes the chain of its
types and the scalar fields of that chain, at most 500 characters of them:
``SimpleX error: error: groupUserRole: {"requiredRole":"author"}``.

The wording functions do no I/O; :class:`Log` writes lines to two text streams.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Final, TextIO

from simplex_protocols._wire import dumps
from simplex_protocols.errors import CoreError, UnexpectedResponseError

__all__ = [
    "CORE_FAILURES",
    "MAX_ERROR_DETAILS_CHARS",
    "Log",
    "chat_error_chain",
    "chat_error_text",
    "failure_text",
    "missing_in_response",
    "server_host",
]

#: A command to the core that failed in a way the server reports in words: the core refused it
#: (:class:`CoreError`), or answered with a response the command does not give
#: (:class:`UnexpectedResponseError`, raised by ``ChatAPI``).
CORE_FAILURES: Final = (CoreError, UnexpectedResponseError)

#: chatErrorText keeps this many characters of an error's details.
MAX_ERROR_DETAILS_CHARS: Final = 500


def _obj(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _tag(value: Any) -> str | None:
    obj = _obj(value)
    if obj is None:
        return None
    tag = obj.get("type")
    return tag if isinstance(tag, str) else None


def _is_chain_key(key: str) -> bool:
    return key == "errorType" or key.endswith("Err") or key.endswith("Error")


def chat_error_chain(chat_error: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The typed objects of an error, from the ChatError inwards.

    The chain follows the field whose name ends in ``Err``, ``Error`` or is ``errorType`` and
    whose value has a ``type`` (``agentError``, ``smpErr``, ``nameErr``, ...); other nested
    values, such as a ``groupInfo``, are left out.
    """
    chain: list[Mapping[str, Any]] = []
    node: Mapping[str, Any] | None = chat_error
    while node is not None and _tag(node) is not None and len(chain) < 16:
        chain.append(node)
        nxt: Mapping[str, Any] | None = None
        for key, value in node.items():
            if _is_chain_key(key) and _tag(value) is not None:
                nxt = _obj(value)
                break
        node = nxt
    return chain


def server_host(address: Any) -> str:
    """The first host of a server address: ``smp://KEY@host1,host2:port`` gives ``host1``."""
    text = address if isinstance(address, str) else ""
    rest = text.split("://", 1)[-1]
    rest = rest.rsplit("@", 1)[-1]
    host = rest.split(",", 1)[0]
    host = host.split("/", 1)[0]
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.split(":", 1)[0]


def _simplex_domain_name(value: Any) -> str:
    if isinstance(value, str):
        return value
    obj = _obj(value)
    if obj is None:
        return "?"
    domain = obj.get("domain")
    domain = domain if isinstance(domain, str) else ""
    if "." in domain:
        return domain
    parts = (
        [p for p in obj.get("subDomain", []) if isinstance(p, str)]
        if isinstance(obj.get("subDomain"), list)
        else []
    )
    tld = obj.get("nameTLD")
    return ".".join([*parts, domain, *([tld] if isinstance(tld, str) else [])])


def _broker_kind(broker_err: Mapping[str, Any]) -> str | None:
    """What a BROKER error is, as the wording tables tell them apart: ``TIMEOUT``, ``NETWORK``,
    ``FINGERPRINT`` (a network error for an unknown CA), ``HOST``, ``VERSION`` or ``None``."""
    tag = _tag(broker_err)
    if tag == "NETWORK" and _tag(broker_err.get("networkError")) == "unknownCAError":
        return "FINGERPRINT"
    if tag in ("TIMEOUT", "NETWORK", "HOST"):
        return tag
    if tag == "TRANSPORT" and _tag(broker_err.get("transportErr")) == "version":
        return "VERSION"
    return None


def _broker_text(broker_err: Mapping[str, Any], host: str) -> str | None:
    """Connection errors of a server (BROKER), as the apps word them."""
    return {
        "TIMEOUT": f"Connection timeout: Please check your network connection with {host} and try again.",
        "NETWORK": f"Connection error: Please check your network connection with {host} and try again.",
        "FINGERPRINT": f"Connection error: Fingerprint in server address does not match certificate: {host}.",
        "HOST": f"Connection error: Server address is incompatible with network settings: {host}.",
        "VERSION": f"Connection error: Server version is incompatible with your app: {host}.",
    }.get(_broker_kind(broker_err) or "")


def _proxy_broker_text(broker_err: Mapping[str, Any], host: str) -> str | None:
    """Errors of the forwarding server (SMP PROXY BROKER)."""
    unreachable = (
        f"Private routing error: Error connecting to forwarding server {host}. Please try later."
    )
    return {
        "TIMEOUT": unreachable,
        "NETWORK": unreachable,
        "FINGERPRINT": f"Private routing error: Fingerprint in forwarding server address does not match certificate: {host}.",
        "HOST": f"Private routing error: Forwarding server address is incompatible with network settings: {host}.",
        "VERSION": f"Private routing error: Forwarding server version is incompatible with network settings: {host}.",
    }.get(_broker_kind(broker_err) or "")


def _relay_text(proxy_err: Mapping[str, Any], proxy: str, relay: str) -> str | None:
    """Errors of the destination server seen by the forwarding server (PROXY protocolError PROXY ...)."""
    if _tag(proxy_err) != "protocolError":
        return None
    protocol_err = _obj(proxy_err.get("protocolErr"))
    if protocol_err is None or _tag(protocol_err) != "PROXY":
        return None
    inner = _obj(protocol_err.get("proxyErr"))
    if inner is None:
        return None
    unreachable = f"Private routing error: Forwarding server {proxy} failed to connect to destination server {relay}. Please try later."
    inner_tag = _tag(inner)
    if inner_tag == "NO_SESSION":
        return unreachable
    if inner_tag != "BROKER":
        return None
    broker_err = _obj(inner.get("brokerErr"))
    if broker_err is None:
        return None
    return {
        "TIMEOUT": unreachable,
        "NETWORK": unreachable,
        "FINGERPRINT": f"Private routing error: Fingerprint in destination server address does not match certificate: {relay}.",
        "HOST": f"Private routing error: Destination server address of {relay} is incompatible with forwarding server {proxy} settings.",
        "VERSION": f"Private routing error: Destination server version of {relay} is incompatible with forwarding server {proxy}.",
    }.get(_broker_kind(broker_err) or "")


def _smp_text(smp_err: Mapping[str, Any], host: str) -> str | None:
    tag = _tag(smp_err)
    if tag == "NAME":
        name_err = _obj(smp_err.get("nameErr")) or {}
        name_tag = _tag(name_err)
        if name_tag == "NOT_FOUND":
            return "Name not found: This SimpleX name is not registered. Please check the name."
        if name_tag == "NO_RESOLVER":
            return f"SimpleX name error: Server {host} does not support name resolution. Use a connection link."
        if name_tag == "RESOLVER":
            detail = name_err.get("resolverErr")
            detail_text = detail if isinstance(detail, str) else dumps(detail)
            return f"SimpleX name error: Resolver error: {detail_text[:MAX_ERROR_DETAILS_CHARS]}"
        return None
    if tag == "AUTH":
        return (
            "Connection link removed: Your contact removed this link, or it was a one-time link "
            "that was already used. To connect, ask your contact to create a new link."
        )
    if tag == "BLOCKED":
        info = _obj(smp_err.get("blockInfo")) or {}
        reason = (
            "Content violates conditions of use." if info.get("reason") == "content" else "Spam."
        )
        return f"Connection blocked: Connection is blocked by server operator: {reason}"
    if tag == "QUOTA":
        return "Undelivered messages: The connection reached the limit of undelivered messages, your contact may be offline."
    if tag == "PROXY":
        proxy_err = _obj(smp_err.get("proxyErr")) or {}
        if _tag(proxy_err) == "BROKER":
            broker_err = _obj(proxy_err.get("brokerErr"))
            if broker_err is not None:
                return _proxy_broker_text(broker_err, host)
    return None


def _worded(chat_error: Mapping[str, Any]) -> str | None:
    tag = _tag(chat_error)
    if tag == "error":
        error_type = _obj(chat_error.get("errorType")) or {}
        inner = _tag(error_type)
        if inner == "invalidConnReq":
            return "Invalid connection link: Please check that you used the correct link or ask your contact to send you another one."
        if inner == "unsupportedConnReq":
            return (
                "Unsupported connection link: This link requires a newer app version. "
                "Please upgrade the app or ask your contact to send a compatible link."
            )
        if inner == "simplexDomainNotReady":
            name = _simplex_domain_name(error_type.get("simplexDomain"))
            reason = _tag(error_type.get("simplexDomainError"))
            if reason == "noValidLink":
                return f"No valid link: The SimpleX name {name} is registered, but it has no valid link."
            if reason == "unknownDomain":
                return (
                    f"Unconfirmed name: The SimpleX name {name} is registered, but not added to profile. "
                    "Please add it to your address or channel profile, if you are the owner."
                )
        return None
    if tag == "errorStore":
        store_tag = _tag(chat_error.get("storeError"))
        if store_tag == "largeMsg":
            return "Message is too large! Please reduce the message size and send again."
        if store_tag == "groupNotFound":
            return "Group not found! This group no longer exists."
        return None
    if tag != "errorAgent":
        return None
    agent_error = _obj(chat_error.get("agentError")) or {}
    agent_tag = _tag(agent_error)
    if agent_tag == "NO_NAME_SERVERS":
        return "SimpleX name error: None of your servers are set to resolve SimpleX names. Use a connection link."
    if agent_tag == "SMP":
        smp_err = _obj(agent_error.get("smpErr"))
        if smp_err is not None:
            return _smp_text(smp_err, server_host(agent_error.get("serverAddress")))
        return None
    if agent_tag == "BROKER":
        broker_err = _obj(agent_error.get("brokerErr"))
        if broker_err is not None:
            return _broker_text(broker_err, server_host(agent_error.get("brokerAddress")))
        return None
    if agent_tag == "PROXY":
        proxy_err = _obj(agent_error.get("proxyErr"))
        if proxy_err is not None:
            return _relay_text(
                proxy_err,
                server_host(agent_error.get("proxyServer")),
                server_host(agent_error.get("relayServer")),
            )
        return None
    if agent_tag == "INTERNAL":
        detail = agent_error.get("internalErr")
        if isinstance(detail, str) and "SEUniqueID" in detail:
            return (
                "Already connected? It seems like you are already connected via this link. "
                "If it is not the case, there was an error (SEUniqueID)."
            )
        return None
    if agent_tag == "AGENT":
        agent_err = _obj(agent_error.get("agentErr")) or {}
        if _tag(agent_err) == "A_SERVICE" and _tag(agent_err.get("serviceError")) == "timeout":
            return "Connection timeout: The service did not respond. Please try again."
    return None


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def chat_error_text(chat_error: Mapping[str, Any]) -> str:
    """A ChatError in words: the apps' alert text, or the chain of its types and fields.

    ``SimpleX error: <types joined by ": ">: <the scalar fields of the chain as JSON>``, the
    JSON cut to 500 characters; without scalar fields the last part is left out.
    """
    worded = _worded(chat_error)
    if worded is not None:
        return worded
    chain = chat_error_chain(chat_error)
    if not chain:
        return "SimpleX error: unknown"
    types = [str(node["type"]) for node in chain]
    fields: dict[str, Any] = {}
    for node in chain:
        for key, value in node.items():
            if key != "type" and _is_scalar(value) and key not in fields:
                fields[key] = value
    text = "SimpleX error: " + ": ".join(types)
    if fields:
        details = dumps(fields)
        if len(details) > MAX_ERROR_DETAILS_CHARS:
            details = details[: MAX_ERROR_DETAILS_CHARS - 1] + "…"
        text += ": " + details
    return text


def _internal_error(message: str) -> dict[str, Any]:
    return {"type": "error", "errorType": {"type": "internalError", "message": message}}


def failure_text(exc: CoreError | UnexpectedResponseError) -> str:
    """A failed command in words: the core's error as :func:`chat_error_text` words it, or an
    unexpected response as an internal error."""
    if isinstance(exc, CoreError):
        return chat_error_text(exc.chat_error)
    return chat_error_text(_internal_error(str(exc)))


def missing_in_response(message: str, response: Mapping[str, Any]) -> CoreError:
    """The error for a core response that lacks what the command returns (an ID, a link)."""
    return CoreError(_internal_error(message), response=response)


class Log:
    """The server's output: log lines on stdout, errors on stderr, each line flushed."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self._out = out if out is not None else sys.stdout
        self._err = err if err is not None else sys.stderr

    @property
    def stream(self) -> TextIO:
        """Where log lines go (stdout, or stderr when stdout carries MCP)."""
        return self._out

    def line(self, text: str) -> None:
        """Write a log line (stdout)."""
        self._out.write(text + "\n")
        self._out.flush()

    def error(self, text: str) -> None:
        """Write an error line (stderr)."""
        self._err.write(text + "\n")
        self._err.flush()
