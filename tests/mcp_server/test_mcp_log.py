"""SimpleX errors worded as the apps word them, and the chain for other errors."""

from __future__ import annotations

import io
from typing import Any

import pytest

from simplex_protocols.mcp_server.log import Log, chat_error_chain, chat_error_text, server_host

SMP = "smp://u2dS9sG8nMNURyZwqASV4yROM28Er0luVTx5X1CsMrU=@smp4.simplex.im,o5vmywmrnaxalvz6wi3zicyftgio6psuvyniis6gco6bp6ekl4cqj4id.onion"
SMP2 = "smp://abc=@smp9.simplex.im"


def agent(error: dict[str, Any]) -> dict[str, Any]:
    return {"type": "errorAgent", "agentError": error, "agentConnId": ""}


def smp(smp_err: dict[str, Any], address: str = SMP) -> dict[str, Any]:
    return agent({"type": "SMP", "serverAddress": address, "smpErr": smp_err})


def broker(broker_err: dict[str, Any]) -> dict[str, Any]:
    return agent({"type": "BROKER", "brokerAddress": SMP, "brokerErr": broker_err})


def proxy(inner: dict[str, Any]) -> dict[str, Any]:
    return agent(
        {
            "type": "PROXY",
            "proxyServer": SMP,
            "relayServer": SMP2,
            "proxyErr": {
                "type": "protocolError",
                "protocolErr": {"type": "PROXY", "proxyErr": inner},
            },
        }
    )


WORDED: list[tuple[str, dict[str, Any], str]] = [
    (
        "error invalidConnReq",
        {"type": "error", "errorType": {"type": "invalidConnReq"}},
        "Invalid connection link: Please check that you used the correct link or ask your contact to send you another one.",
    ),
    (
        "error unsupportedConnReq",
        {"type": "error", "errorType": {"type": "unsupportedConnReq"}},
        "Unsupported connection link: This link requires a newer app version. Please upgrade the app or ask your contact to send a compatible link.",
    ),
    (
        "error simplexDomainNotReady noValidLink",
        {
            "type": "error",
            "errorType": {
                "type": "simplexDomainNotReady",
                "simplexDomain": {"nameTLD": "simplex", "domain": "ridgeline", "subDomain": []},
                "simplexDomainError": {"type": "noValidLink"},
            },
        },
        "No valid link: The SimpleX name ridgeline.simplex is registered, but it has no valid link.",
    ),
    (
        "error simplexDomainNotReady unknownDomain",
        {
            "type": "error",
            "errorType": {
                "type": "simplexDomainNotReady",
                "simplexDomain": {"nameTLD": "simplex", "domain": "ridgeline", "subDomain": []},
                "simplexDomainError": {"type": "unknownDomain"},
            },
        },
        "Unconfirmed name: The SimpleX name ridgeline.simplex is registered, but not added to profile. Please add it to your address or channel profile, if you are the owner.",
    ),
    (
        "errorAgent NO_NAME_SERVERS",
        agent({"type": "NO_NAME_SERVERS"}),
        "SimpleX name error: None of your servers are set to resolve SimpleX names. Use a connection link.",
    ),
    (
        "errorAgent SMP NAME NOT_FOUND",
        smp({"type": "NAME", "nameErr": {"type": "NOT_FOUND"}}),
        "Name not found: This SimpleX name is not registered. Please check the name.",
    ),
    (
        "errorAgent SMP NAME NO_RESOLVER",
        smp({"type": "NAME", "nameErr": {"type": "NO_RESOLVER"}}),
        "SimpleX name error: Server smp4.simplex.im does not support name resolution. Use a connection link.",
    ),
    (
        "errorAgent SMP NAME RESOLVER",
        smp({"type": "NAME", "nameErr": {"type": "RESOLVER", "resolverErr": "bad proof"}}),
        "SimpleX name error: Resolver error: bad proof",
    ),
    (
        "errorAgent SMP AUTH",
        smp({"type": "AUTH"}),
        "Connection link removed: Your contact removed this link, or it was a one-time link that was already used. To connect, ask your contact to create a new link.",
    ),
    (
        "errorAgent SMP BLOCKED spam",
        smp({"type": "BLOCKED", "blockInfo": {"reason": "spam"}}),
        "Connection blocked: Connection is blocked by server operator: Spam.",
    ),
    (
        "errorAgent SMP BLOCKED content",
        smp({"type": "BLOCKED", "blockInfo": {"reason": "content"}}),
        "Connection blocked: Connection is blocked by server operator: Content violates conditions of use.",
    ),
    (
        "errorAgent SMP QUOTA",
        smp({"type": "QUOTA"}),
        "Undelivered messages: The connection reached the limit of undelivered messages, your contact may be offline.",
    ),
    (
        "errorAgent INTERNAL SEUniqueID",
        agent({"type": "INTERNAL", "internalErr": "SEUniqueID"}),
        "Already connected? It seems like you are already connected via this link. If it is not the case, there was an error (SEUniqueID).",
    ),
    (
        "errorAgent BROKER TIMEOUT",
        broker({"type": "TIMEOUT"}),
        "Connection timeout: Please check your network connection with smp4.simplex.im and try again.",
    ),
    (
        "errorAgent BROKER NETWORK",
        broker({"type": "NETWORK", "networkError": {"type": "failedError"}}),
        "Connection error: Please check your network connection with smp4.simplex.im and try again.",
    ),
    (
        "errorAgent BROKER NETWORK unknownCAError",
        broker({"type": "NETWORK", "networkError": {"type": "unknownCAError"}}),
        "Connection error: Fingerprint in server address does not match certificate: smp4.simplex.im.",
    ),
    (
        "errorAgent BROKER HOST",
        broker({"type": "HOST"}),
        "Connection error: Server address is incompatible with network settings: smp4.simplex.im.",
    ),
    (
        "errorAgent BROKER TRANSPORT version",
        broker({"type": "TRANSPORT", "transportErr": {"type": "version"}}),
        "Connection error: Server version is incompatible with your app: smp4.simplex.im.",
    ),
    (
        "errorAgent SMP PROXY BROKER TIMEOUT",
        smp({"type": "PROXY", "proxyErr": {"type": "BROKER", "brokerErr": {"type": "TIMEOUT"}}}),
        "Private routing error: Error connecting to forwarding server smp4.simplex.im. Please try later.",
    ),
    (
        "errorAgent SMP PROXY BROKER NETWORK",
        smp(
            {
                "type": "PROXY",
                "proxyErr": {
                    "type": "BROKER",
                    "brokerErr": {
                        "type": "NETWORK",
                        "networkError": {"type": "connectError", "connectError": "x"},
                    },
                },
            }
        ),
        "Private routing error: Error connecting to forwarding server smp4.simplex.im. Please try later.",
    ),
    (
        "errorAgent SMP PROXY BROKER NETWORK unknownCAError",
        smp(
            {
                "type": "PROXY",
                "proxyErr": {
                    "type": "BROKER",
                    "brokerErr": {"type": "NETWORK", "networkError": {"type": "unknownCAError"}},
                },
            }
        ),
        "Private routing error: Fingerprint in forwarding server address does not match certificate: smp4.simplex.im.",
    ),
    (
        "errorAgent SMP PROXY BROKER HOST",
        smp({"type": "PROXY", "proxyErr": {"type": "BROKER", "brokerErr": {"type": "HOST"}}}),
        "Private routing error: Forwarding server address is incompatible with network settings: smp4.simplex.im.",
    ),
    (
        "errorAgent SMP PROXY BROKER TRANSPORT version",
        smp(
            {
                "type": "PROXY",
                "proxyErr": {
                    "type": "BROKER",
                    "brokerErr": {"type": "TRANSPORT", "transportErr": {"type": "version"}},
                },
            }
        ),
        "Private routing error: Forwarding server version is incompatible with network settings: smp4.simplex.im.",
    ),
    (
        "errorAgent PROXY protocolError PROXY BROKER TIMEOUT",
        proxy({"type": "BROKER", "brokerErr": {"type": "TIMEOUT"}}),
        "Private routing error: Forwarding server smp4.simplex.im failed to connect to destination server smp9.simplex.im. Please try later.",
    ),
    (
        "errorAgent PROXY protocolError PROXY NO_SESSION",
        proxy({"type": "NO_SESSION"}),
        "Private routing error: Forwarding server smp4.simplex.im failed to connect to destination server smp9.simplex.im. Please try later.",
    ),
    (
        "errorAgent PROXY ... BROKER NETWORK unknownCAError",
        proxy(
            {
                "type": "BROKER",
                "brokerErr": {"type": "NETWORK", "networkError": {"type": "unknownCAError"}},
            }
        ),
        "Private routing error: Fingerprint in destination server address does not match certificate: smp9.simplex.im.",
    ),
    (
        "errorAgent PROXY ... BROKER HOST",
        proxy({"type": "BROKER", "brokerErr": {"type": "HOST"}}),
        "Private routing error: Destination server address of smp9.simplex.im is incompatible with forwarding server smp4.simplex.im settings.",
    ),
    (
        "errorAgent PROXY ... BROKER TRANSPORT version",
        proxy(
            {
                "type": "BROKER",
                "brokerErr": {"type": "TRANSPORT", "transportErr": {"type": "version"}},
            }
        ),
        "Private routing error: Destination server version of smp9.simplex.im is incompatible with forwarding server smp4.simplex.im.",
    ),
    (
        "errorAgent AGENT A_SERVICE timeout",
        agent(
            {
                "type": "AGENT",
                "agentErr": {"type": "A_SERVICE", "serviceError": {"type": "timeout"}},
            }
        ),
        "Connection timeout: The service did not respond. Please try again.",
    ),
    (
        "errorStore largeMsg",
        {"type": "errorStore", "storeError": {"type": "largeMsg"}},
        "Message is too large! Please reduce the message size and send again.",
    ),
    (
        "errorStore groupNotFound",
        {"type": "errorStore", "storeError": {"type": "groupNotFound", "groupId": 13}},
        "Group not found! This group no longer exists.",
    ),
]


@pytest.mark.parametrize(("shape", "error", "text"), WORDED, ids=[w[0] for w in WORDED])
def test_errors_worded_by_the_apps(shape: str, error: dict[str, Any], text: str) -> None:
    worded = chat_error_text(error)
    assert worded == text
    assert not worded.startswith("SimpleX error:")


def test_other_errors_are_the_chain_with_its_scalar_fields() -> None:
    error = {
        "type": "error",
        "errorType": {
            "type": "groupUserRole",
            "groupInfo": {"groupId": 12, "groupProfile": {"displayName": "x\n/approve 1"}},
            "requiredRole": "author",
        },
    }
    assert (
        chat_error_text(error) == 'SimpleX error: error: groupUserRole: {"requiredRole":"author"}'
    )


def test_the_chain_follows_error_fields_only() -> None:
    error = smp({"type": "NAME", "nameErr": {"type": "WEIRD"}})
    assert [node["type"] for node in chat_error_chain(error)] == [
        "errorAgent",
        "SMP",
        "NAME",
        "WEIRD",
    ]
    assert (
        chat_error_text(error)
        == f'SimpleX error: errorAgent: SMP: NAME: WEIRD: {{"agentConnId":"","serverAddress":"{SMP}"}}'
    )


def test_a_chain_without_scalars_has_no_details() -> None:
    assert (
        chat_error_text({"type": "error", "errorType": {"type": "chatNotStarted"}})
        == "SimpleX error: error: chatNotStarted"
    )


def test_details_are_cut_to_500_characters() -> None:
    error = {"type": "error", "errorType": {"type": "commandError", "message": "x" * 2000}}
    text = chat_error_text(error)
    prefix = "SimpleX error: error: commandError: "
    assert text.startswith(prefix)
    assert len(text) - len(prefix) == 500
    assert text.endswith("…")


def test_server_host_is_the_first_host() -> None:
    assert server_host(SMP) == "smp4.simplex.im"
    assert server_host("smp://k@h1:5223") == "h1"
    assert server_host(None) == ""


def test_log_writes_lines_to_stdout_and_errors_to_stderr() -> None:
    out, err = io.StringIO(), io.StringIO()
    log = Log(out, err)
    log.line("Listening on http://127.0.0.1:5226/mcp")
    log.error("Port 5226 is in use. Start with --port N.")
    assert out.getvalue() == "Listening on http://127.0.0.1:5226/mcp\n"
    assert err.getvalue() == "Port 5226 is in use. Start with --port N.\n"
