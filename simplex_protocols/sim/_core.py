"""One simulated chat core: the command dispatcher over the handler mixins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _grammar
from ._cmd_groups import GroupCommands
from ._corebase import Session
from ._errors import ChatFailure
from ._service import DEFERRED

if TYPE_CHECKING:
    from ._network import Delivery

__all__ = ["SimCore"]

JSON = dict[str, Any]


class SimCore(GroupCommands):
    """A simulated chat core: one database, its users, and the clients attached to it."""

    def __repr__(self) -> str:
        return f"SimCore({self.name!r}, users={len(self.db.users)}, started={self.started})"

    def handle_command(self, session: Session | None, corr_id: str, command: str) -> None:
        """Run one command; its response goes to ``session`` before the events it causes."""
        resp = self.run_command(session, corr_id, command)
        if resp is not DEFERRED:
            self.reply(session, corr_id, resp)
        self.flush_deferred()
        if self.network.chaos:
            self.emit({"type": "simChaosEvent", "note": "an event type no client knows"})
        self.network.pump()

    def run_command(self, session: Session | None, corr_id: str, command: str) -> JSON:
        self._deferred = []
        self._current = (session, corr_id)
        try:
            parsed = _grammar.parse_command(command)
            if isinstance(parsed, str):
                return _cmd_error(
                    {"type": "error", "errorType": {"type": "commandError", "message": parsed}}
                )
            handler = getattr(self, "cmd_" + parsed.handler)
            result: JSON = handler(parsed.args)
            return result
        except ChatFailure as failure:
            return _cmd_error(failure.chat_error)
        except Exception as exc:  # never let a command crash the core
            return _cmd_error(
                {
                    "type": "error",
                    "errorType": {
                        "type": "internalError",
                        "message": f"{type(exc).__name__}: {exc}",
                    },
                }
            )
        finally:
            self._current = (None, "")

    def execute(self, command: str) -> JSON:
        """Run one command directly and return its response (events go to the sessions).

        Blocking commands (``/_service_request``) need a session: use a backend.
        """
        resp = self.run_command(None, "", command)
        self.flush_deferred()
        self.network.pump()
        if resp is DEFERRED:
            return _cmd_error(
                {
                    "type": "error",
                    "errorType": {
                        "type": "commandError",
                        "message": "a blocking command needs a client session (use a backend)",
                    },
                }
            )
        return resp

    def on_accepted(self, d: Delivery) -> None:
        """A router accepted one of our messages."""
        if d.body.get("t") == "x.svc.resp":
            self.on_service_sent(d)
        elif d.receipt:
            self.on_sent(d)


def _cmd_error(chat_error: JSON) -> JSON:
    return {"type": "chatCmdError", "chatError": chat_error}
