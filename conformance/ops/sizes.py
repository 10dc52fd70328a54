"""Vector operations of the size recommendations (``spec/vectors/sizes/``).

- ``sizes.check_recommended``: an envelope's JSON text as the core writes it (``args.kind``
  ``request`` or ``response``, ``args.signed``) → ``{"json_bytes", "padded_bytes",
  "within_recommended"}``; ``within_recommended`` is false above 10,000 bytes of JSON
  (RPC-LIM-3 is a SHOULD NOT: the size is measured, the envelope is not refused); refused with
  ``too_large`` above 11,106 padded bytes (RPC-LIM-2).

The other limits are tested at their boundaries in the files of this folder with the
operations of their own families (JSON nesting, ``retryAfter``, SimpleX names, llms.txt lines).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import op
from .rpc import envelope_size

__all__: list[str] = []


@op("sizes.check_recommended")
def check_recommended(value: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """Sizes of an envelope and whether its JSON is within the recommendation (RPC-LIM-3);
    refused (``too_large``) over the padded limit."""
    size = envelope_size(value, args)
    return {
        "json_bytes": size.json_bytes,
        "padded_bytes": size.padded_bytes,
        "within_recommended": size.within_recommended,
    }
