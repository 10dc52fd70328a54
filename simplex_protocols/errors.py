"""The exception tree of simplex-protocols.

Every error the library raises derives from :class:`SimplexError`. Each class says which
side is at fault (we were asked to build something invalid, a peer sent something invalid,
the responder answered with an error, the chat core refused a command, the connection to
the core was lost, or nothing arrived in time). Where the spec has a wire code, the class
carries it.

Parse errors are also :class:`ValueError`, timeouts are also :class:`TimeoutError` and lost
connections are also :class:`ConnectionError`, so callers that only know the builtins still
catch them.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "BackendUnavailableError",
    "BadRequestError",
    "BindingConfigError",
    "BotConfigError",
    "CallFormatError",
    "CallFramingError",
    "CallTimeoutError",
    "CommandArgumentError",
    "ConversationRequiredError",
    "CoreConnectionError",
    "CoreError",
    "CoreOptionError",
    "DataFolderError",
    "DeclarationError",
    "DiscoveryError",
    "EnvelopeError",
    "EventOverflowError",
    "InternalServiceError",
    "JSONRPCResponseError",
    "KeyFileError",
    "LLMsTxtError",
    "LinkError",
    "LocalProtocolError",
    "MessageTooLargeError",
    "ParseError",
    "ProtocolError",
    "RateLimitedError",
    "RemoteProtocolError",
    "RequestKeyMismatchError",
    "ServiceError",
    "ServiceTransportError",
    "SignatureError",
    "SimplexError",
    "TooLargeError",
    "UnexpectedResponseError",
    "UnsupportedProtocolError",
    "UnsupportedVersionError",
    "service_error_for_code",
]


class SimplexError(Exception):
    """Base of every error raised by simplex-protocols. Never raised itself.

    Every class of the tree has a class attribute :attr:`code`: a stable, snake_case string to
    branch on (docs/errors.md lists them). Where one class covers several problems, an
    instance carries a more precise code of its own (a :class:`ParseError` says which rule the
    input broke; a :class:`ServiceError` keeps the envelope's code).
    """

    code: str = "error"


# --------------------------------------------------------------------------- protocol errors


class ProtocolError(SimplexError):
    """A message breaks "Agent protocols over SimpleX"."""

    code = "protocol_error"


class LocalProtocolError(ProtocolError):
    """We were asked to build or send a message that breaks the spec."""

    code = "local_protocol_error"


class MessageTooLargeError(LocalProtocolError):
    """A message would exceed a size limit; nothing was sent.

    Attributes:
        size: the size of the message in bytes, measured as the limit counts it.
        limit: the limit in bytes.
        what: which limit (for example ``"chat message"`` or ``"service request"``).
    """

    code = "message_too_large"

    def __init__(self, what: str, size: int, limit: int) -> None:
        super().__init__(f"{what} is {size} bytes, over the limit of {limit} bytes")
        self.what = what
        self.size = size
        self.limit = limit


class RemoteProtocolError(ProtocolError):
    """A peer, a website or the chat core sent something that breaks the spec."""

    code = "remote_protocol_error"


class ParseError(RemoteProtocolError, ValueError):
    """Input could not be parsed or validated.

    Attributes:
        reason: what was wrong, in words.
        requirement: the ID of the spec requirement the input breaks (see
            ``spec/requirements.json``), when one applies.
        position: where in the input the problem is: a character offset for text, a JSON
            pointer (``"/error/retryAfter"``) for JSON, or ``None``.
        input_excerpt: at most 80 characters of the offending input, for error messages.
        code: a stable, machine-readable code for the problem (``"not_an_object"``,
            ``"bad_protocol_name"``, ...). Tests and the conformance driver compare codes,
            never message text.
    """

    code = "parse_error"

    def __init__(
        self,
        reason: str,
        *,
        code: str,
        requirement: str | None = None,
        position: int | str | None = None,
        input_excerpt: str | None = None,
    ) -> None:
        where = f" at {position}" if position is not None and position != "" else ""
        req = f" [{requirement}]" if requirement else ""
        super().__init__(f"{reason}{where}{req}")
        self.reason = reason
        self.code = code
        self.requirement = requirement
        self.position = position
        self.input_excerpt = _excerpt(input_excerpt) if input_excerpt is not None else None


class LLMsTxtError(ParseError):
    """An llms.txt Communications section or one of its entries is invalid.

    Attributes:
        line: the 1-based line of the llms.txt file the problem is on, when known
            (:attr:`position` is then the character offset within that line).
    """

    code = "bad_llms_txt"

    def __init__(
        self,
        reason: str,
        *,
        code: str,
        requirement: str | None = None,
        position: int | str | None = None,
        input_excerpt: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(
            f"line {line}: {reason}" if line is not None else reason,
            code=code,
            requirement=requirement,
            position=position,
            input_excerpt=input_excerpt,
        )
        self.reason = reason
        self.line = line


class LinkError(ParseError):
    """A SimpleX link or a SimpleX name could not be parsed."""

    code = "bad_link"


class DeclarationError(ParseError):
    """A ``protocols`` declaration, a public group record or address link data is invalid."""

    code = "bad_declaration"


class CallFramingError(ParseError):
    """A ``/_call`` command or a reply to one is malformed.

    Besides the attributes of :class:`ParseError`, the parts read before the problem are kept,
    so that a responder can answer with the protocol's own parse error:

    Attributes:
        protocol: the protocol name, when the command got that far, else ``None``.
        member: the mentioned member's name, when the command has a valid mention.
        request_text: the raw request text, when the command got that far.
    """

    code = "bad_call"

    protocol: str | None = None
    member: str | None = None
    request_text: str | None = None


class CallFormatError(LocalProtocolError, ValueError):
    """A ``/_call`` command or a reply could not be built from the values given; nothing was sent.

    Attributes: ``reason`` (in words), ``code`` (stable: ``"bad_protocol_name"``,
    ``"bad_member_name"``, ``"request_not_object"``, ...) and ``requirement`` (a spec ID or
    ``None``).
    """

    code = "bad_call_values"

    def __init__(self, reason: str, *, code: str, requirement: str | None = None) -> None:
        super().__init__(f"{reason} [{requirement}]" if requirement else reason)
        self.reason = reason
        self.code = code
        self.requirement = requirement


class EnvelopeError(ParseError):
    """A Service RPC request or response envelope is invalid."""

    code = "bad_envelope"


class SignatureError(RemoteProtocolError, ValueError):
    """A signature or a public key failed verification or could not be decoded."""

    code = "bad_signature"

    def __init__(self, reason: str, *, code: str = "bad_signature") -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class RequestKeyMismatchError(RemoteProtocolError):
    """``requestKey`` differs from the key the core verified, or the request is unsigned.

    The responder answers such a request with ``bad_request`` (RPC-SIG-3, RPC-SIG-4).

    Attributes:
        request_key: the key the envelope claims.
        signer_key: the key the core verified, or ``None`` for an unsigned request.
    """

    code = "request_key_mismatch"

    requirement: str

    def __init__(self, request_key: str, signer_key: str | None) -> None:
        if signer_key is None:
            reason = "the request carries requestKey but is not signed"
            self.requirement = "RPC-SIG-4"
        else:
            reason = "requestKey differs from the verified signer key"
            self.requirement = "RPC-SIG-3"
        super().__init__(reason)
        self.request_key = request_key
        self.signer_key = signer_key


#: The default ``KeyFileError.code`` of an ``errno``.
_KEY_FILE_CODES: Mapping[int, str] = {
    errno.ENOENT: "missing",
    errno.EEXIST: "exists",
    errno.EPERM: "unsafe_permissions",
    errno.EINVAL: "malformed",
    errno.EFBIG: "malformed",
    errno.ELOOP: "malformed",
    errno.ENOTDIR: "malformed",
    errno.EISDIR: "malformed",
    errno.EACCES: "unreadable",
}


class KeyFileError(SimplexError, OSError):
    """A signing key file (or the MCP request-state secret, or their folder) is missing,
    unreadable, malformed or has unsafe permissions.

    An ``OSError``: built and caught as one, with ``errno``, ``strerror`` and ``filename``.
    Attributes: ``code``, stable, to branch on without reading ``errno``:

    - ``"missing"``: the file does not exist (``ENOENT``);
    - ``"exists"``: a key file the responder already has is never overwritten (``EEXIST``);
    - ``"unsafe_permissions"``: group or others can access the file or the folder (``EPERM``;
      ``chmod 600`` / ``chmod 700`` fixes it);
    - ``"malformed"``: not what it must be: contents that are not a key or secret, a file that
      is too large, not a regular file, a symbolic link, a folder path that is a file
      (``EINVAL``, ``EFBIG``, ``ELOOP``, ``ENOTDIR``, ``EISDIR``);
    - ``"unreadable"``: the system refuses access (``EACCES``);
    - ``"unusable"``: any other system error (``errno`` says which).

    ``code`` is a keyword argument; without it, it follows from ``errno`` as listed.
    """

    code = "unusable"

    def __init__(self, *args: Any, code: str | None = None) -> None:
        super().__init__(*args)
        if code is None:
            code = _KEY_FILE_CODES.get(self.errno, "unusable") if self.errno else "unusable"
        self.code = code


class DataFolderError(SimplexError, OSError):
    """A bot's data folder, or a file in it, is unusable: unsafe permissions, unreadable, or
    not what the bot wrote there. ``errno`` and ``filename`` say what and where."""

    code = "data_folder_unusable"


class BotConfigError(SimplexError, ValueError):
    """A :class:`~simplex_protocols.bot.ResponderBot` was given an unusable setting.

    Nothing was sent to the core. Attributes: ``reason`` (in words), ``code`` (stable:
    ``"nothing_served"``, ``"bad_peer_type"``, ``"bad_transports"``, ``"bad_description"``,
    ``"bad_serves"``, ``"bad_commands"``, ``"bad_setting"``, ``"not_running"``) and
    ``argument`` (the parameter's name).
    """

    code = "bad_setting"

    def __init__(self, reason: str, *, code: str, argument: str) -> None:
        super().__init__(f"{argument}: {reason}")
        self.reason = reason
        self.code = code
        self.argument = argument


# --------------------------------------------------------------------------- service errors


class ServiceError(SimplexError):
    """The responder answered a Service RPC request with an envelope ``error``.

    Unknown codes are kept as they are: :attr:`code` is a plain string.

    Attributes:
        code: the error code from the envelope.
        message: the optional description for logs.
        retry_after: seconds after which a repeated request can succeed, or ``None``.
        error: the whole error object as received (unknown members kept).
    """

    code = "service_error"

    def __init__(
        self,
        code: str,
        message: str | None = None,
        retry_after: int | None = None,
        error: Mapping[str, Any] | None = None,
    ) -> None:
        text = f"service error {code}"
        if message:
            text += f": {_excerpt(message, 200)}"
        if retry_after is not None:
            text += f" (retry after {retry_after} s)"
        super().__init__(text)
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.error: Mapping[str, Any] = error if error is not None else {"code": code}

    @property
    def retryable(self) -> bool:
        """Whether repeating the request can succeed.

        ``rate_limited`` and any error with ``retryAfter`` are retryable; an unknown code
        without ``retryAfter`` is final (RPC-ERR-6).
        """
        return self.retry_after is not None


class UnsupportedProtocolError(ServiceError):
    """``unsupported_protocol``: the responder does not serve the protocol over Service RPC."""

    code = "unsupported_protocol"


class UnsupportedVersionError(ServiceError):
    """``unsupported_version``: the responder does not serve the requested version."""

    code = "unsupported_version"


class BadRequestError(ServiceError):
    """``bad_request``: the envelope was invalid or ``requestKey`` was not the signer key."""

    code = "bad_request"


class ConversationRequiredError(ServiceError):
    """``conversation_required``: connect to the address and use the chat transport."""

    code = "conversation_required"


class TooLargeError(ServiceError):
    """``too_large``: the response exceeded the size limit."""

    code = "too_large"


class RateLimitedError(ServiceError):
    """``rate_limited``: repeat the request after :attr:`retry_after` seconds."""

    code = "rate_limited"


class InternalServiceError(ServiceError):
    """``internal``: the responder failed."""

    code = "internal"


_SERVICE_ERRORS: dict[str, type[ServiceError]] = {
    cls.code: cls
    for cls in (
        UnsupportedProtocolError,
        UnsupportedVersionError,
        BadRequestError,
        ConversationRequiredError,
        TooLargeError,
        RateLimitedError,
        InternalServiceError,
    )
}


def service_error_for_code(
    code: str,
    message: str | None = None,
    retry_after: int | None = None,
    error: Mapping[str, Any] | None = None,
) -> ServiceError:
    """Build the :class:`ServiceError` subclass for an envelope error code.

    An unknown code gives a plain :class:`ServiceError` that keeps the code.
    """
    cls = _SERVICE_ERRORS.get(code, ServiceError)
    return cls(code, message, retry_after, error)


# --------------------------------------------------------------------------- binding errors


class JSONRPCResponseError(SimplexError):
    """A protocol answer (MCP or A2A) was a JSON-RPC error response; raised on the caller side.

    Attributes:
        jsonrpc_code: the JSON-RPC error code (for A2A: -32001 task not found, -32009 version
            not supported, ...); ``None`` when the error object had no integer code.
        error_message: the error's ``message``, or ``""``.
        data: the error's ``data``, or ``None``.
        response: the whole response object as received.
    """

    code = "jsonrpc_error"

    def __init__(self, response: Mapping[str, Any]) -> None:
        error = response.get("error")
        error = error if isinstance(error, Mapping) else {}
        code = error.get("code")
        message = error.get("message")
        self.jsonrpc_code: int | None = (
            code if isinstance(code, int) and not isinstance(code, bool) else None
        )
        self.error_message: str = message if isinstance(message, str) else ""
        self.data: Any = error.get("data")
        self.response: Mapping[str, Any] = response
        super().__init__(f"JSON-RPC error {self.jsonrpc_code}: {_excerpt(self.error_message, 200)}")


class BindingConfigError(SimplexError, ValueError):
    """A protocol binding was given a setting it cannot use (a version, a database URL ...).

    Attributes: ``reason`` (in words) and ``code`` (stable: ``"bad_version"``,
    ``"bad_database_url"``, ``"driver_missing"``, ...).
    """

    code = "bad_binding_setting"

    def __init__(self, reason: str, *, code: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


# --------------------------------------------------------------------------- core and I/O errors


#: The arguments of a core command that hold a secret: ``sign_key=`` of ``/_service_request``
#: is the requester's Ed25519 private key (RPC-SIG-1).
_SECRET_ARGUMENT: Final = re.compile(r"(?<![^\s])(sign_key=)\S+")

#: What stands for a secret argument's value in an error.
_REDACTED: Final = "<redacted>"


def _redacted(command: str | None) -> str | None:
    """``command`` with the value of every secret argument replaced by ``<redacted>``.

    Errors keep the command that failed, and errors end up in logs, reprs, pickles and bug
    reports; the requester's private key must reach none of them, so it is removed where the
    command enters an error, once for every error class that keeps one.
    """
    if command is None:
        return None
    return _SECRET_ARGUMENT.sub(lambda m: m.group(1) + _REDACTED, command)


class CoreError(SimplexError):
    """The chat core answered a command with an error (``chatCmdError`` or ``chatError``).

    Attributes:
        chat_error: the core's ChatError object, unchanged.
        response: the whole response object as received.
        command: the command that failed, when known, with the value of a secret argument
            (``sign_key=``) replaced by ``<redacted>``.
    """

    code = "core_error"

    def __init__(
        self,
        chat_error: Mapping[str, Any],
        *,
        response: Mapping[str, Any] | None = None,
        command: str | None = None,
    ) -> None:
        self.chat_error: Mapping[str, Any] = chat_error
        self.response: Mapping[str, Any] = response if response is not None else {}
        self.command = _redacted(command)
        super().__init__(self.describe())

    @property
    def error_type(self) -> str:
        """The innermost error tag, e.g. ``"noActiveUser"`` or ``"groupNotFound"``."""
        chain = self.chain
        return chain[-1] if chain else "unknown"

    @property
    def chain(self) -> list[str]:
        """The error tags from outside in, e.g. ``["errorAgent", "SMP", "NAME", "NOT_FOUND"]``."""
        out: list[str] = []
        node: Any = self.chat_error
        for _ in range(8):
            if not isinstance(node, Mapping):
                break
            tag = node.get("type")
            if not isinstance(tag, str):
                break
            out.append(tag)
            nxt = None
            for key, value in node.items():
                if key != "type" and isinstance(value, Mapping) and "type" in value:
                    nxt = value
                    break
            node = nxt
        return out

    def describe(self) -> str:
        """One line that says what went wrong, in words, with the core's error chain."""
        chain = " ".join(self.chain) or "unknown error"
        what = f"the chat core refused {self.command.split(' ', 1)[0]!r}" if self.command else ""
        detail = _error_detail(self.chat_error)
        text = f"{what}: {chain}" if what else f"chat core error: {chain}"
        return f"{text} ({detail})" if detail else text


class ServiceTransportError(CoreError):
    """The chat core could not carry a Service RPC request or response (``A_SERVICE`` errors).

    A timeout is not one of these: it is :class:`CallTimeoutError`.

    Attributes:
        service_error: the core's ``AgentServiceError`` tag: ``notDRAddress`` (the address has
            no ratchet keys, so it takes no service requests), ``badSignature`` (the signature
            did not verify at the responder), ``rejected`` (the responder's agent refused the
            request), ``noPendingRequest`` (a response after the 180 s window, or to an unknown
            request), or another tag the core may add.
    """

    code = "service_transport_error"

    def __init__(
        self,
        chat_error: Mapping[str, Any],
        *,
        service_error: str,
        response: Mapping[str, Any] | None = None,
        command: str | None = None,
    ) -> None:
        super().__init__(chat_error, response=response, command=command)
        self.service_error = service_error


class CoreConnectionError(SimplexError, ConnectionError):
    """The connection to the chat core was lost, or could not be made."""

    code = "core_connection_lost"


class BackendUnavailableError(CoreConnectionError):
    """A chat core backend cannot run here: a native library or an extra is missing."""

    code = "backend_unavailable"


class CoreOptionError(SimplexError, ValueError):
    """A ``--core`` option or ``SIMPLEX_CORE`` value names no usable chat core backend.

    Attributes:
        reason: what was wrong, in words (the message also lists the accepted forms).
        code: a stable code: ``"empty"``, ``"unknown_form"``, ``"bad_url"``, ``"bad_port"``,
            ``"non_loopback_host"``, ``"bad_db_prefix"``, ``"bad_user"``.
        value: the text that was refused (at most 80 characters).
        source: where the text came from (``"--core"``, ``"SIMPLEX_CORE"``), when known.
    """

    code = "bad_core_option"

    def __init__(self, reason: str, *, code: str, value: str, source: str | None = None) -> None:
        where = f"{source}={_excerpt(value)!r}: " if source else f"{_excerpt(value)!r}: "
        super().__init__(where + reason)
        self.reason = reason
        self.code = code
        self.value = _excerpt(value)
        self.source = source


class CommandArgumentError(LocalProtocolError, ValueError):
    """A chat core command could not be built: an argument is out of range or malformed.

    Nothing was sent. Attributes: ``reason`` (in words), ``code`` (stable: ``"bad_id"``,
    ``"id_too_long"``, ``"bad_chat_ref"``, ``"bad_token"``, ``"bad_json"``, ...) and
    ``argument`` (the parameter's name).
    """

    code = "bad_command_argument"

    def __init__(self, reason: str, *, code: str, argument: str) -> None:
        super().__init__(f"{argument}: {reason}")
        self.reason = reason
        self.code = code
        self.argument = argument


class UnexpectedResponseError(RemoteProtocolError):
    """The chat core answered a command with a response of a type the caller cannot use.

    Attributes:
        expected: the response type tags the caller accepts.
        received: the tag that arrived (``""`` when the response had none).
        response: the response object as received.
        command: the command that was answered, when known (a secret argument's value
            replaced, as in :class:`CoreError`).
        code: ``"unexpected_response"``, or ``"malformed_frame"`` for a frame without a
            response object.
    """

    code = "unexpected_response"

    def __init__(
        self,
        expected: tuple[str, ...],
        received: str,
        *,
        response: Mapping[str, Any] | None = None,
        command: str | None = None,
        code: str = "unexpected_response",
    ) -> None:
        what = f" to {command.split(' ', 1)[0]!r}" if command else ""
        wanted = " or ".join(repr(t) for t in expected) if expected else "a response object"
        got = repr(received) if received else "nothing usable"
        super().__init__(f"the chat core answered{what} with {got}, expected {wanted}")
        self.expected = expected
        self.received = received
        self.response: Mapping[str, Any] = response if response is not None else {}
        self.command = _redacted(command)
        self.code = code


class EventOverflowError(SimplexError):
    """An event subscriber fell behind by more than its buffer; later events were not kept.

    The subscriber got every event up to the overflow, in order; then this error ends its
    subscription. Other subscribers and commands are unaffected.

    Attributes:
        buffer_size: how many events the subscription could hold.
    """

    code = "event_overflow"

    def __init__(self, buffer_size: int) -> None:
        super().__init__(
            f"event subscriber fell behind by more than {buffer_size} events; "
            "its subscription was ended so that no event is skipped silently"
        )
        self.buffer_size = buffer_size


class CallTimeoutError(SimplexError, TimeoutError):
    """No (final) answer arrived before the deadline.

    Attributes:
        timeout: the wait in seconds.
        partial: whatever was collected before the deadline (replies, events), if anything.
    """

    code = "timeout"

    def __init__(self, message: str, *, timeout: float | None = None, partial: Any = None) -> None:
        super().__init__(message)
        self.timeout = timeout
        self.partial = partial


class DiscoveryError(SimplexError):
    """A website could not be read for SimpleX addresses (llms.txt, well-known documents, HTML).

    Attributes:
        reason: what went wrong, in words.
        code: a stable code: ``"bad_url"``, ``"insecure_url"`` (not HTTPS, and not a loopback
            host), ``"redirect_refused"``, ``"too_many_redirects"``, ``"too_large"``,
            ``"timeout"``, ``"unreachable"``, ``"http_status"``, ``"bad_content"``.
        url: the URL concerned, when known.
        status: the HTTP status, for ``"http_status"``.
    """

    code = "discovery_failed"

    def __init__(
        self, reason: str, *, code: str, url: str | None = None, status: int | None = None
    ) -> None:
        super().__init__(f"{url}: {reason}" if url else reason)
        self.reason = reason
        self.code = code
        self.url = url
        self.status = status


# --------------------------------------------------------------------------- helpers


def _excerpt(text: str, limit: int = 80) -> str:
    flat = "".join(ch if ch.isprintable() else "\ufffd" for ch in text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _error_detail(chat_error: Mapping[str, Any]) -> str:
    """Pick a human message out of a ChatError, when it has one."""
    stack: list[Any] = [chat_error]
    for _ in range(16):
        if not stack:
            break
        node = stack.pop()
        if isinstance(node, Mapping):
            for key in ("message", "errorMessage", "reason"):
                value = node.get(key)
                if isinstance(value, str) and value:
                    return _excerpt(value, 200)
            stack.extend(v for v in node.values() if isinstance(v, Mapping))
    return ""
