"""The QR code of the join link, for a terminal (plan "What the person sees: CLI").

The modules of the link's QR code at error correction level L, with a light margin of
2 modules. Dark modules are SGR 40 (background) or 30 (foreground), light ones 47 or 37;
each line ends with ``ESC[0m``.

- small (default): one column per module and two module rows per line, with an extra light
  row when the row count is odd; two equal modules are a space with their background, two
  different ones ``▄`` with the bottom module's foreground and the top module's background.
  37 columns by 19 lines for 33 modules.
- large: two spaces with the module's background per module, one line per module: 74 columns
  by 37 lines for 33 modules.

Without colour (``NO_COLOR`` set, or standard output not a terminal: see
:func:`colours_wanted`) the same layouts are drawn with plain characters and no escape
sequence: a light module is ink (``█``, or ``▀``/``▄`` for half a cell) and a dark one is blank,
as segno's own compact terminal output does, because a terminal's text is usually light on a
dark background. segno's output is not used as is: its large layout needs escape sequences, and
its small one pads an odd row count with a dark row where the plan pads with a light one.

No I/O here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Final, Literal, TextIO

import segno

__all__ = ["MARGIN_MODULES", "colours_wanted", "qr_lines", "qr_modules"]

MARGIN_MODULES: Final = 2
_RESET: Final = "\x1b[0m"
_BG: Final = {True: "40", False: "47"}
_FG: Final = {True: "30", False: "37"}
#: Plain cells by (top is dark, bottom is dark): light modules are ink.
_PLAIN_HALVES: Final = {
    (False, False): "\u2588",
    (False, True): "\u2580",
    (True, False): "\u2584",
    (True, True): " ",
}
_PLAIN_FULL: Final = {True: "  ", False: "\u2588\u2588"}


def colours_wanted(stream: TextIO | None = None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether output to ``stream`` (default standard output) may carry colour escapes.

    No when ``NO_COLOR`` has any non-empty value (the no-color.org convention), or when the
    stream is not a terminal (a file, a pipe, a log collector would keep the escapes as text).
    """
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    out = sys.stdout if stream is None else stream
    isatty = getattr(out, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except (OSError, ValueError):  # a closed or detached stream
        return False


def qr_modules(text: str) -> list[list[bool]]:
    """The QR code's modules (``True`` is dark) with the light margin, level L."""
    code = segno.make_qr(text, error="l", boost_error=False)
    return [[bool(v) for v in row] for row in code.matrix_iter(scale=1, border=MARGIN_MODULES)]


def qr_lines(
    text: str, size: Literal["small", "large"] = "small", *, colour: bool = True
) -> list[str]:
    """The terminal lines of the QR code of ``text``; plain characters when not ``colour``."""
    rows = qr_modules(text)
    lines: list[str] = []
    if size == "large":
        for row in rows:
            if colour:
                lines.append(_line([(_BG[dark], "  ") for dark in row]))
            else:
                lines.append("".join(_PLAIN_FULL[dark] for dark in row))
        return lines
    if len(rows) % 2:
        rows.append([False] * len(rows[0]))
    for top, bottom in zip(rows[0::2], rows[1::2], strict=True):
        if not colour:
            lines.append("".join(_PLAIN_HALVES[pair] for pair in zip(top, bottom, strict=True)))
            continue
        cells: list[tuple[str, str]] = []
        for upper, lower in zip(top, bottom, strict=True):
            if upper == lower:
                cells.append((_BG[upper], " "))
            else:
                cells.append((f"{_FG[lower]};{_BG[upper]}", "\u2584"))
        lines.append(_line(cells))
    return lines


def _line(cells: list[tuple[str, str]]) -> str:
    """Cells of (SGR parameters, text), an SGR sequence only where the parameters change."""
    out: list[str] = []
    current = ""
    for sgr, text in cells:
        if sgr != current:
            out.append(f"\x1b[{sgr}m")
            current = sgr
        out.append(text)
    out.append(_RESET)
    return "".join(out)
