"""Codec and signing overhead, as ratios to a baseline measured in the same run.

Run: ``python bench/codecs.py``. For a 2 KB MCP ``tools/call`` request:

- ``/_call`` parse+validate, and a Service RPC request envelope parse+validate, each against a
  plain ``json.loads`` of the same text;
- sign and verify of a Service RPC request against raw libsodium ``crypto_sign`` /
  ``crypto_sign_open`` of the same bytes.

Each figure is the best of several runs of many repetitions (``time.perf_counter``). Goals:
codecs within 1.5x of ``json.loads``, signing within 1.1x of raw libsodium.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import nacl.bindings as sodium

from simplex_protocols.rpc import (
    ServiceRequest,
    SigningKey,
    format_service_request,
    parse_service_request,
)
from simplex_protocols.rpc.advanced import service_signature_input

REPEAT = 2000
RUNS = 7


def best_of(fn: Callable[[], object], repeat: int = REPEAT, runs: int = RUNS) -> float:
    """Best mean seconds per call over ``runs`` runs of ``repeat`` calls."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def mcp_tools_call(size: int = 2048) -> dict[str, object]:
    request: dict[str, object] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "availability",
            "arguments": {"item": "anvil", "note": ""},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    filler = size - len(json.dumps(request, separators=(",", ":")))
    request["params"]["arguments"]["note"] = "n" * max(filler, 0)  # type: ignore[index]
    return request


def main() -> None:
    request = mcp_tools_call()
    request_text = json.dumps(request, separators=(",", ":"))
    rows: list[tuple[str, float, float, str]] = []

    # (a) /_call parse+validate against json.loads of the same request text.
    try:
        from simplex_protocols.chat_call import parse_call_command
    except ImportError:
        rows.append(("/_call parse+validate", float("nan"), float("nan"), "json.loads"))
    else:
        command = "/_call mcp " + request_text
        base = best_of(lambda: json.loads(request_text))
        ours = best_of(lambda: parse_call_command(command))
        rows.append(("/_call parse+validate", ours, base, "json.loads"))

    # (b) the Service RPC envelope as the responder receives it.
    key = SigningKey.from_seed(bytes(range(32)))
    envelope = format_service_request(
        ServiceRequest(protocol="mcp", request=request, request_key=key.public_key.encode())
    )
    base = best_of(lambda: json.loads(envelope))
    ours = best_of(lambda: parse_service_request(envelope))
    rows.append(("envelope parse+validate", ours, base, "json.loads"))
    # The responder gets requestData already decoded inside the event: validation alone.
    decoded = json.loads(envelope)
    ours = best_of(lambda: parse_service_request(decoded))
    rows.append(("envelope validate (object)", ours, base, "json.loads"))

    # (c) sign and verify against raw libsodium on the same input.
    ad = bytes(range(112))
    payload = envelope.encode()
    message = service_signature_input(ad, payload)
    _, secret = sodium.crypto_sign_seed_keypair(bytes(range(32)))
    public = key.public_key
    signature = key.sign_service_payload(ad, payload)
    signed = signature + message
    base = best_of(lambda: sodium.crypto_sign(message, secret))
    ours = best_of(lambda: key.sign_service_payload(ad, payload))
    rows.append(("sign", ours, base, "crypto_sign"))
    base = best_of(lambda: sodium.crypto_sign_open(signed, public.raw))
    ours = best_of(lambda: public.verify_service_payload(ad, payload, signature))
    rows.append(("verify", ours, base, "crypto_sign_open"))

    print(f"payload: MCP tools/call, {len(request_text)} bytes; envelope {len(envelope)} bytes")
    print(f"{'operation':<26}{'ours (us)':>11}{'baseline (us)':>15}  {'ratio':>6}  baseline")
    for name, ours_s, base_s, baseline in rows:
        ratio = ours_s / base_s if base_s == base_s and base_s > 0 else float("nan")
        print(f"{name:<26}{ours_s * 1e6:>11.2f}{base_s * 1e6:>15.2f}  {ratio:>6.2f}  {baseline}")


if __name__ == "__main__":
    main()
