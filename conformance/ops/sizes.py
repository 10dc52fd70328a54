"""Vector operations of the size recommendations (``spec/vectors/sizes/``).

- ``sizes.check_recommended``: an envelope's JSON text as the core writes it (``args.kind``
  ``request`` or ``response``, ``args.signed``) → ``{"json_bytes", "padded_bytes"}``; refused
  with ``over_recommended_size`` above 10,000 bytes of JSON (RPC-LIM-3, a SHOULD NOT: a
  breach is a warning) and with ``too_large`` above 11,106 padded bytes (RPC-LIM-2).

The other limits are tested at their boundaries in the files of this folder with the
operations of their own families (JSON nesting, ``retryAfter``, SimpleX names, llms.txt lines).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simplex_protocols.errors import ParseError
from simplex_protocols.limits import MAX_SERVICE_JSON_BYTES

from . import op
from .rpc import envelope_size

__all__: list[str] = []


@op("sizes.check_recommended")
def check_recommended(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """Sizes of an envelope, refused over the recommendation or the padded limit."""
    size = envelope_size(value, args)
    if not size.within_recommended:
        # RPC-LIM-3: a request's or response's JSON stays at or under 10,000 bytes.
        raise ParseError(
            f"{size.json_bytes} bytes of JSON, over the {MAX_SERVICE_JSON_BYTES} recommended",
            code="over_recommended_size",
            requirement="RPC-LIM-3",
        )
    return {"json_bytes": size.json_bytes, "padded_bytes": size.padded_bytes}
