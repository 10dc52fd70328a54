"""The simulated core's command parser: tables of command patterns, compiled to regexes.

A pattern is the command's syntax as the core API reference writes it:

- literal text, matched exactly (one space separates parts, as in the core's parser);
- ``<name:type>``, a parameter of a type below (``<name>`` alone is a ``word``);
- ``[ ... ]``, an optional part (may nest); ``(a|b)`` literal alternatives are written as a
  parameter of type ``a|b``.

Each command group registers its handlers with the patterns they answer
(:meth:`CommandGroup.command`); a :class:`Grammar` is built from groups in order. The first
pattern that matches the whole command (trailing spaces removed, as the core does) selects
its handler, which receives the core's context and the parameters as strings (``None`` for
an absent optional part). A command that no pattern matches is refused with
``commandError``, never an exception.

A grammar is a plain value, so a core that parses another set of commands (another core
version, the CLI's short forms) is a core with another grammar: :meth:`Grammar.edited` makes one
from another by removing and replacing patterns (a core profile's table of differences).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._context import Args, CoreContext

__all__ = ["Command", "CommandGroup", "Grammar", "Handler", "ParsedCommand"]

JSON = dict[str, Any]

#: A command handler: the core's context and the parameters in, the response out.
Handler = Callable[[CoreContext, Args], JSON]

_TYPES: dict[str, str] = {
    "int": r"-?\d{1,19}",
    "ids": r"\d{1,19}(?:,\d{1,19})*",
    "onoff": r"on|off",
    "word": r"\S+",
    "num": r"\d+(?:\.\d+)?",
    "role": r"owner|admin|moderator|member|observer|author",
    "chatref": r"[@#*:%]\d{1,19}(?:\(_support(?::\d{1,19})?\))?",
    # a SimpleX link, not a name (cores before SimpleX names read only links here)
    "link": r"(?!simplex:/name)(?:simplex:/|https://)\S+",
    # a display name as the CLI reads one (displayNameP): 'quoted', or up to a space or comma
    "dname": r"'[^\x00-\x20#@'][^']*'|[^\x00-\x20#@'][^\s,]*",
    "sendref": r"[@#]\d{1,19}(?:\(_support(?::\d{1,19})?\))?(?:\(as_group=(?:on|off)\))?",
    "json": r"[\[{].*",
    "rest": r".+",
    "text": r".*",
    "delmode": r"full|entity|messages",
    "itemdel": r"broadcast|internal|internalMark|history",
    "resolve": r"allGroups|unknown|never",
    "ttl": r"\d+|default",
    "page": r"count=\d+|(?:after|before|around)=\d{1,19} count=\d+|initial=\d+",
    "timepage": r"count=\d+|(?:after|before)=\S+ count=\d+",
    "contenttag": r"[a-z]+",
}

_PARAM_RE = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)(?::([^>]+))?>")

#: Prefixes that many unrelated commands start with (``/chats`` starts with ``/c``): a refusal
#: does not name their syntax.
_UNHELPFUL_PREFIXES = ("/c", "/net")


@dataclass(frozen=True)
class Command:
    """One command of a table: its syntax and the handler that runs it.

    ``defaults`` are parameters the handler reads that this pattern does not have (a pattern
    that replaced another, shorter one): they are given as absent (``None``).
    """

    pattern: str
    handler: Handler
    regex: re.Pattern[str]
    prefix: str
    defaults: tuple[str, ...] = ()

    @classmethod
    def compile(cls, pattern: str, handler: Handler, defaults: tuple[str, ...] = ()) -> Command:
        rx, prefix = _compile(pattern)
        own = {m[0] for m in _PARAM_RE.findall(pattern)}
        missing = tuple(name for name in defaults if name not in own)
        return cls(pattern, handler, re.compile(rx + r"\Z", re.DOTALL), prefix, missing)

    @property
    def params(self) -> tuple[str, ...]:
        """The names of the pattern's parameters."""
        return tuple(m[0] for m in _PARAM_RE.findall(self.pattern))

    @property
    def glued(self) -> bool:
        """Whether a parameter follows the first word's literal text directly (``@<name>``,
        ``/_groups<userId>``): the command's first word is then not the pattern's."""
        head = self.prefix.split(" ", 1)[0]
        return head == self.prefix and self.pattern[len(head) : len(head) + 1] == "<"


@dataclass(frozen=True)
class ParsedCommand:
    """A command that matched a pattern: its handler and its parameters."""

    handler: Handler
    args: Args
    pattern: str


def _compile(pattern: str) -> tuple[str, str]:
    """Compile a pattern into a regex, and return its literal prefix."""
    out: list[str] = []
    i = 0
    prefix_done = False
    prefix = []
    while i < len(pattern):
        ch = pattern[i]
        if ch == "[":
            out.append("(?:")
            prefix_done = True
            i += 1
        elif ch == "]":
            out.append(")?")
            i += 1
        elif ch == "<":
            m = _PARAM_RE.match(pattern, i)
            if not m:
                raise ValueError(f"bad parameter in command pattern {pattern!r}")
            name, kind = m.group(1), m.group(2) or "word"
            rx = _TYPES.get(kind, kind)
            out.append(f"(?P<{name}>{rx})")
            prefix_done = True
            i = m.end()
        else:
            out.append(re.escape(ch))
            if not prefix_done:
                prefix.append(ch)
            i += 1
    return "".join(out), "".join(prefix).rstrip()


class CommandGroup:
    """The commands of one area (users, messages, groups, ...), in matching order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.commands: list[Command] = []

    def __repr__(self) -> str:
        return f"CommandGroup({self.name!r}, {len(self.commands)} commands)"

    def command(self, *patterns: str) -> Callable[[Handler], Handler]:
        """Register the decorated handler for each of ``patterns`` (in this order)."""

        def register(handler: Handler) -> Handler:
            for pattern in patterns:
                self.commands.append(Command.compile(pattern, handler))
            return handler

        return register


def _head(text: str) -> str:
    return text.split(" ", 1)[0]


class Grammar:
    """A parser over the commands of some groups: the first matching pattern wins."""

    def __init__(self, groups: Iterable[CommandGroup]) -> None:
        self._index(tuple(c for g in groups for c in g.commands))

    @classmethod
    def of_commands(cls, commands: Iterable[Command]) -> Grammar:
        """A grammar of these commands, in this order."""
        grammar = cls(())
        grammar._index(tuple(commands))
        return grammar

    def _index(self, commands: tuple[Command, ...]) -> None:
        self.commands = commands
        by_head: dict[str, list[tuple[int, Command]]] = {}
        glued: list[tuple[int, Command]] = []
        for n, command in enumerate(commands):
            if command.glued:
                glued.append((n, command))
            else:
                by_head.setdefault(_head(command.prefix), []).append((n, command))
        self._by_head = {head: tuple(cmds) for head, cmds in by_head.items()}
        self._glued = tuple(glued)

    def edited(
        self,
        *,
        removed: Iterable[str] = (),
        replaced: Mapping[str, Sequence[str]] | None = None,
    ) -> Grammar:
        """This grammar with some patterns removed and others replaced, in place, by other
        patterns for the same handler (the parameters a replacement lacks are absent).

        Raises:
            ValueError: a pattern named is not one of this grammar's.
        """
        gone = set(removed)
        swaps = dict(replaced or {})
        known = {c.pattern for c in self.commands}
        unknown = sorted((gone | set(swaps)) - known)
        if unknown:
            raise ValueError(f"not a pattern of this grammar: {unknown[0]!r}")
        out: list[Command] = []
        for command in self.commands:
            if command.pattern in gone:
                continue
            if command.pattern in swaps:
                names = command.params + command.defaults
                out.extend(
                    Command.compile(p, command.handler, names) for p in swaps[command.pattern]
                )
                continue
            out.append(command)
        return Grammar.of_commands(out)

    def parse(self, command: str) -> ParsedCommand | str:
        """Match a command against the table.

        Returns the parsed command, or a message for ``commandError`` that names the syntax the
        command's prefix expects.
        """
        text = command.rstrip(" ")
        candidates = self._by_head.get(_head(text), ())
        glued = tuple(c for c in self._glued if text.startswith(c[1].prefix))
        if glued:
            candidates = tuple(sorted(candidates + glued, key=lambda c: c[0]))
        for _, spec in candidates:
            m = spec.regex.match(text)
            if m:
                args: Args = dict.fromkeys(spec.defaults)
                args.update(m.groupdict())
                return ParsedCommand(spec.handler, args, spec.pattern)
        best: Command | None = None
        for spec in self.commands:
            if text.startswith(spec.prefix) and (
                best is None or len(spec.prefix) > len(best.prefix)
            ):
                best = spec
        if best is not None and best.prefix not in _UNHELPFUL_PREFIXES:
            return f"Failed reading: {best.pattern}"
        word = text.split(" ", 1)[0] if text else ""
        return f"Failed reading: unknown command {word!r}" if word else "Failed reading: empty"
