"""The chat core's Markdown parser (``simplex_protocols.coretext.Markdown``) on 1 MB texts.

Run: ``python bench/markdown.py``. For each text of about a megabyte, the parse time (best of
runs, the result cache off) against a plain ``json.dumps`` of the same text in the same run:
what encoding the message costs anyway. Goal: ordinary text (prose, chat text with formats and
links, many short lines) under a second per megabyte; every text, whatever its characters,
parsed in time linear in its length (the adversarial ones below were quadratic once: a search
to the end of the line from each ``[`` or ``@``, fragments joined one copy at a time).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from simplex_protocols.coretext import Markdown
from simplex_protocols.links import parse_simplex_link, parse_simplex_name

MB = 1_000_000
RUNS = 3

MD = Markdown(parse_link=parse_simplex_link, parse_name=parse_simplex_name, cache_size=0)


def _mb(unit: str) -> str:
    return (unit * (MB // len(unit) + 1))[:MB]


ORDINARY = {
    "prose": _mb("Lorem ipsum dolor sit amet, consectetur adipiscing elit. Sed do eiusmod. "),
    "chat text": _mb(
        "hello @bob, see *this* and _that_ at https://example.com/page or call +1 555 123 4567. "
    ),
    "short lines": _mb("ok, see you at 10\n"),
}
ADVERSARIAL = {
    "[[[[": "[" * MB,
    "a....": "a" + "." * (MB - 1),
    "@'@'": "@'" * (MB // 2),
    "1 1 1": "1 " * (MB // 2),
    "#a #a": "#a " * (MB // 3),
}


def best_of(fn: Callable[[], object], runs: int = RUNS) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    for title, texts in (("ordinary", ORDINARY), ("adversarial", ADVERSARIAL)):
        print(f"{title} texts, {MB:,} characters each:")
        for name, text in texts.items():
            baseline = best_of(lambda text=text: json.dumps(text))  # type: ignore[misc]
            parse = best_of(lambda text=text: MD.parse(text))  # type: ignore[misc]
            print(
                f"  {name:<12} {parse * 1000:8.0f} ms  {parse / baseline:6.0f}x json.dumps"
                f"  ({baseline * 1000:.1f} ms)"
            )


if __name__ == "__main__":
    main()
