"""Codec and signing overhead, as ratios to a baseline measured in the same run.

Run: ``python bench/codecs.py``. For a 2 KB MCP ``tools/call`` request:

- ``/_call`` parse+validate, and a Service RPC request envelope parse+validate, each against a
  plain ``json.loads`` of the same text;
- sign and verify of a Service RPC request against raw libsodium ``crypto_sign`` /
  ``crypto_sign_open`` of the same bytes.

Each figure is the best of several runs of many repetitions, timed in CPU time of this process
(``time.process_time``: time the scheduler gives to other processes on a shared machine does not
count); the runs of an operation and of its baseline alternate, so a busy moment of the machine
falls on both.
Goals: codecs within 1.5x of ``json.loads``, signing within 1.1x of raw libsodium.

The last rows compare :func:`simplex_protocols._wire.loads` (the fast path) and
:func:`~simplex_protocols._wire.reference_loads` (the standard library's decoder with every check
written out) with ``json.loads`` on payloads of other shapes (many small objects, a long array
of numbers, colons inside strings), where the strictness checks cost the most.
"""

from __future__ import annotations

import functools
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

REPEAT = 1000
RUNS = 21


def _run(fn: Callable[[], object], repeat: int) -> float:
    start = time.process_time()
    for _ in range(repeat):
        fn()
    return (time.process_time() - start) / repeat


def best_pair(
    ours: Callable[[], object],
    base: Callable[[], object],
    repeat: int = REPEAT,
    runs: int = RUNS,
) -> tuple[float, float]:
    """Best mean seconds per call of ``ours`` and of ``base``, their runs alternating."""
    best_ours = best_base = float("inf")
    for _ in range(runs):
        best_base = min(best_base, _run(base, repeat))
        best_ours = min(best_ours, _run(ours, repeat))
    return best_ours, best_base


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


def other_shapes() -> list[tuple[str, str]]:
    """JSON texts of about 2 KB whose shape makes the strictness checks work hardest."""
    objects = [{"id": i, "ok": True, "tags": ["a", "b"]} for i in range(50)]
    numbers = [i * 1.5 for i in range(250)]
    links = {"links": [f"https://example.com/page/{i}?at=12:{i:02}" for i in range(50)]}
    return [
        ("small objects", json.dumps(objects, separators=(",", ":"))),
        ("array of floats", json.dumps(numbers, separators=(",", ":"))),
        ("colons in strings", json.dumps(links, separators=(",", ":"))),
    ]


def main() -> None:
    from simplex_protocols._wire import loads, reference_loads

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
        ours, base = best_pair(
            lambda: parse_call_command(command), lambda: json.loads(request_text)
        )
        rows.append(("/_call parse+validate", ours, base, "json.loads"))

    # (b) the Service RPC envelope as the responder receives it.
    key = SigningKey.from_seed(bytes(range(32)))
    envelope = format_service_request(
        ServiceRequest(protocol="mcp", request=request, request_key=key.public_key.encode())
    )
    ours, base = best_pair(lambda: parse_service_request(envelope), lambda: json.loads(envelope))
    rows.append(("envelope parse+validate", ours, base, "json.loads"))
    # The responder gets requestData already decoded inside the event: validation alone.
    decoded = json.loads(envelope)
    ours, base = best_pair(lambda: parse_service_request(decoded), lambda: json.loads(envelope))
    rows.append(("envelope validate (object)", ours, base, "json.loads"))

    # (c) sign and verify against raw libsodium on the same input.
    ad = bytes(range(112))
    payload = envelope.encode()
    message = service_signature_input(ad, payload)
    _, secret = sodium.crypto_sign_seed_keypair(bytes(range(32)))
    public = key.public_key
    signature = key.sign_service_payload(ad, payload)
    signed = signature + message
    ours, base = best_pair(
        lambda: key.sign_service_payload(ad, payload), lambda: sodium.crypto_sign(message, secret)
    )
    rows.append(("sign", ours, base, "crypto_sign"))
    ours, base = best_pair(
        lambda: public.verify_service_payload(ad, payload, signature),
        lambda: sodium.crypto_sign_open(signed, public.raw),
    )
    rows.append(("verify", ours, base, "crypto_sign_open"))

    # (d) wire JSON decoding alone, on other shapes: the fast path and the reference path.
    for name, text in other_shapes():
        for label, decode in (("loads", loads), ("reference", reference_loads)):
            ours, base = best_pair(
                functools.partial(decode, text),
                functools.partial(json.loads, text),
                repeat=REPEAT // 4,
            )
            rows.append((f"{label}: {name}", ours, base, "json.loads"))

    print(f"payload: MCP tools/call, {len(request_text)} bytes; envelope {len(envelope)} bytes")
    print(f"{'operation':<28}{'ours (us)':>11}{'baseline (us)':>15}  {'ratio':>6}  baseline")
    for name, ours_s, base_s, baseline in rows:
        ratio = ours_s / base_s if base_s == base_s and base_s > 0 else float("nan")
        print(f"{name:<28}{ours_s * 1e6:>11.2f}{base_s * 1e6:>15.2f}  {ratio:>6.2f}  {baseline}")


if __name__ == "__main__":
    main()
