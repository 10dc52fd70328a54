"""What this chat core can do: its version and the capabilities the toolkit relies on.

The seeds describe the newest core; users run the core they have, and some of what the spec
relies on is in no released core's sources we can read (``docs/core.md``). A core that lacks a
command refuses it with ``commandError``; one whose records lack a key drops it without a word.
:func:`probe_core` finds both out once, by asking the core harmlessly:

- **the parser**: each capability's command form is sent with a user and a contact that do not
  exist (ID ``999999999999999``), so a core that parses it answers with a store error (``user
  not found``, ``contact not found``) and does nothing, while one that does not parse it answers
  ``commandError``. Where a capability is an option of a command, the command is sent without
  the option too (the control): when the core refuses that as well, the probe itself was
  refused, and the capability is ``unknown`` rather than ``missing``;
- **the records**: a key is written and read back. The user's own profile and address are read
  first (a bot's profile already holds its ``protocols``); otherwise a scratch value is used:
  a prepared contact or group (``/_prepare``, local to the core: nothing is sent) whose link data
  carries the key, or the address settings with a scratch ``serves``, each deleted or restored
  at once.

The probe sends nothing to anyone and leaves the user's chats, profile and address as they
were. The result is kept per :class:`~simplex_protocols.core.ChatCore` for the life of the
process: a second probe of the same core asks only for what was not asked before.
"""

from __future__ import annotations

import base64
import enum
import urllib.parse
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio

from simplex_protocols.errors import CallTimeoutError, CoreError, UnexpectedResponseError
from simplex_protocols.rpc import SigningKey

from . import _commands as cmds
from ._api import ChatAPI
from ._client import ChatCore
from ._commands import ContactRef, GroupRef

__all__ = [
    "Capability",
    "CapabilityResult",
    "CapabilityStatus",
    "CoreCapabilities",
    "probe_core",
]


class Capability(enum.StrEnum):
    """A capability of a chat core that the toolkit relies on."""

    SERVICE_REQUESTS = "service-requests"
    SERVICE_REQUEST_SEND = "service-request-send"
    PROTOCOLS_PREFERENCE = "protocols-preference"
    GROUP_PROTOCOLS_PREFERENCE = "group-protocols-preference"
    ADDRESS_SERVES = "address-serves"
    SHORT_LINKS = "short-links"
    ADDRESS_PQ_RATCHET = "address-pq-ratchet"
    CUSTOM_DATA = "custom-data"
    PREPARED_CHATS = "prepared-chats"
    SIMPLEX_NAMES = "simplex-names"
    BUSINESS_ADDRESSES = "business-addresses"
    LIVE_MESSAGES = "live-messages"
    SIGNED_MESSAGES = "signed-messages"
    GROUP_INVITATIONS = "group-invitations"

    @property
    def uses(self) -> str:
        """What of the core the capability is: the commands, options or keys."""
        return _USES[self]

    @property
    def affects(self) -> str:
        """What the toolkit loses on a core without it, in one line."""
        return _AFFECTS[self]


_USES: Final = {
    Capability.SERVICE_REQUESTS: "/_start … service_requests=on, serviceRequest events, "
    "/_service_response",
    Capability.SERVICE_REQUEST_SEND: "/_service_request … timeout= sign_key= (signed and unsigned)",
    Capability.PROTOCOLS_PREFERENCE: "a protocols key in the profile's preferences, kept on "
    "/_profile and in the profiles the core receives",
    Capability.GROUP_PROTOCOLS_PREFERENCE: "a protocols key in a group profile's groupPreferences",
    Capability.ADDRESS_SERVES: "serves in the address settings, published in the link data",
    Capability.SHORT_LINKS: "/_short_link_address (address short links and their link data)",
    Capability.ADDRESS_PQ_RATCHET: "/_address … pq_ratchet=on|off (ratchet keys on the address)",
    Capability.CUSTOM_DATA: "/_set custom @contact|#group [json]",
    Capability.PREPARED_CHATS: "/_prepare contact … domain=, /_prepare group … direct=off",
    Capability.SIMPLEX_NAMES: "SimpleX names (@name.simplex) as /_connect plan targets",
    Capability.BUSINESS_ADDRESSES: "businessAddress in the address settings",
    Capability.LIVE_MESSAGES: "/_send … live=on",
    Capability.SIGNED_MESSAGES: "/_send … sign=on",
    Capability.GROUP_INVITATIONS: "/_set accept group invitations <userId> on|off",
}

_AFFECTS: Final = {
    Capability.SERVICE_REQUESTS: "no Service RPC responder: a bot answers in conversations only, "
    "and its declaration says rpc: false",
    Capability.SERVICE_REQUEST_SEND: "no Service RPC calls from this core: simplex-call calls "
    "in a conversation instead",
    Capability.PROTOCOLS_PREFERENCE: "the core drops protocol declarations from profiles: "
    "callers find none in a bot's profile or link data (declare in llms.txt or the Agent Card)",
    Capability.GROUP_PROTOCOLS_PREFERENCE: "groups and business chats carry no protocol "
    "declarations",
    Capability.ADDRESS_SERVES: "an address cannot say which peers it serves: callers read the "
    "default (people)",
    Capability.SHORT_LINKS: "addresses without short links: no link data to read before connecting",
    Capability.ADDRESS_PQ_RATCHET: "addresses without ratchet keys cannot take Service RPC "
    "requests",
    Capability.CUSTOM_DATA: "no custom data on chats: simplex-mcp keeps its control chat's "
    "state in its data folder instead",
    Capability.PREPARED_CHATS: "channels cannot be joined (direct=off), and a prepared chat "
    "does not record the SimpleX name it was found by (domain=)",
    Capability.SIMPLEX_NAMES: "SimpleX names cannot be resolved: targets must be links",
    Capability.BUSINESS_ADDRESSES: "no business addresses",
    Capability.LIVE_MESSAGES: "no live (streamed) messages",
    Capability.SIGNED_MESSAGES: "messages cannot be signed",
    Capability.GROUP_INVITATIONS: "a bot cannot accept group invitations by itself",
}


class CapabilityStatus(enum.StrEnum):
    """What the probe found of a capability."""

    OK = "ok"
    MISSING = "missing"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class CapabilityResult:
    """One capability as probed: its status, and how the probe told."""

    capability: Capability
    status: CapabilityStatus
    evidence: str

    def describe(self) -> str:
        """One line: the capability, its status, the evidence and (if not ok) what it affects."""
        line = f"{self.capability}: {self.status} ({self.evidence})"
        if self.status is not CapabilityStatus.OK:
            line += f"; {self.capability.affects}"
        return line


@dataclass(frozen=True, slots=True)
class CoreCapabilities:
    """A core's version and what was found of each capability probed.

    Attributes:
        version: the version ``/version`` reports (``None``: the core did not say).
        results: the capabilities probed, in :class:`Capability` order.
    """

    version: str | None
    results: tuple[CapabilityResult, ...]

    def result(self, capability: Capability | str) -> CapabilityResult:
        """What was found of ``capability`` (``unknown`` when it was not probed)."""
        wanted = Capability(capability)
        for found in self.results:
            if found.capability is wanted:
                return found
        return CapabilityResult(wanted, CapabilityStatus.UNKNOWN, "not probed")

    def status(self, capability: Capability | str) -> CapabilityStatus:
        """The status of ``capability`` (``unknown`` when it was not probed)."""
        return self.result(capability).status

    def has(self, capability: Capability | str) -> bool:
        """Whether the core has ``capability`` (found ``ok``)."""
        return self.status(capability) is CapabilityStatus.OK

    @property
    def missing(self) -> tuple[Capability, ...]:
        """The capabilities found missing."""
        return tuple(r.capability for r in self.results if r.status is CapabilityStatus.MISSING)

    @property
    def unknown(self) -> tuple[Capability, ...]:
        """The capabilities probed whose status could not be told."""
        return tuple(r.capability for r in self.results if r.status is CapabilityStatus.UNKNOWN)

    def to_json(self) -> dict[str, Any]:
        """``{"core": {"version"}, "capabilities": [{"name", "status", "affects", "evidence"}]}``."""
        return {
            "core": {"version": self.version},
            "capabilities": [
                {
                    "name": str(r.capability),
                    "status": str(r.status),
                    "affects": r.capability.affects,
                    "evidence": r.evidence,
                }
                for r in self.results
            ],
        }


# ---------------------------------------------------------------------------- probe values

#: A user, a contact and a group that no core has (the largest ID the builders accept): the
#: probes' commands fail after the core parsed them, before they do anything.
_NOBODY: Final = 999_999_999_999_999

#: How long to wait for each probe's answer.
_PROBE_TIMEOUT_S: Final = 15.0

#: The scratch protocol of the read-back probes (a protocol name: lowercase, digits, hyphens).
_SCRATCH_PROTOCOLS: Final = {"x-probe": {"versions": ["1"], "transports": {"chat": True}}}
_SCRATCH_SERVES: Final = ["agent"]
_SCRATCH_NAME: Final = "probe.simplex"
#: The end of the evidence of a read-back that was not run (``scratch=False``): not kept.
_NOT_PROBED: Final = " (not probed)"


def _b64(byte: int, n: int) -> str:
    return base64.urlsafe_b64encode(bytes([byte]) * n).rstrip(b"=").decode()


def _scratch_link(group: bool) -> str:
    """A well-formed full contact link (a group link with ``group``) to a router that does not
    exist (``.invalid`` is reserved): the core reads it, and nothing is ever sent to it."""
    queue = (
        f"smp://{_b64(7, 32)}@probe.simplex-protocols.invalid/{_b64(9, 24)}"
        f"#/?v=1-4&dh=MCowBQYDK2VuAyEA{_b64(5, 32)}&q=c"
    )
    link = "simplex:/contact#/?v=2-7&smp=" + urllib.parse.quote(queue, safe="")
    if group:
        data = '{"type":"group","groupLinkId":"' + _b64(3, 16) + '"}'
        link += "&data=" + urllib.parse.quote(data, safe="")
    return link


_CONTACT_LINK: Final = _scratch_link(group=False)
_GROUP_LINK: Final = _scratch_link(group=True)
# A key for the signed request's form: the request never leaves the core (its user is missing).
_SIGN_KEY: Final = SigningKey.generate(lambda n: bytes([1]) * n).to_sign_key()


def _contact_link_data(preferences: Mapping[str, Any] | None = None) -> dict[str, Any]:
    profile: dict[str, Any] = {"displayName": "probe", "fullName": ""}
    if preferences is not None:
        profile["preferences"] = dict(preferences)
    return {"profile": profile, "business": False}


def _group_link_data(group_preferences: Mapping[str, Any] | None = None) -> dict[str, Any]:
    profile: dict[str, Any] = {"displayName": "probe", "fullName": ""}
    if group_preferences is not None:
        profile["groupPreferences"] = dict(group_preferences)
    return {"groupProfile": profile}


def _get(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


# ---------------------------------------------------------------------------- the probe


class _Probe:
    """The probes of one core, for one user."""

    def __init__(
        self,
        api: ChatAPI,
        user_id: int | None,
        scratch: bool,
        written_profile: Mapping[str, Any] | None = None,
        written_address_settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.api = api
        self.user_id = user_id
        self.scratch = scratch
        self.written_profile = written_profile
        self.written_address_settings = written_address_settings

    async def parses(self, cmd: str) -> bool | None:
        """Whether the core parsed ``cmd`` (``None``: it did not answer in time)."""
        try:
            await self.api.core.command(cmd, timeout=_PROBE_TIMEOUT_S)
        except CoreError as exc:
            return exc.error_type != "commandError"
        except CallTimeoutError:
            return None
        return True

    async def form(
        self, capability: Capability, test: str, control: str | None = None, *, what: str
    ) -> CapabilityResult:
        """A capability that is a command form: ``test`` parses or not; ``control`` (the form
        without the capability's option) must parse for the answer to count."""
        if control is not None:
            base = await self.parses(control)
            if base is not True:
                return _unknown(capability, f"the core refused the probe itself ({what})")
        found = await self.parses(test)
        if found is None:
            return _unknown(capability, "the core did not answer the probe")
        if found:
            return _ok(capability, f"the core parses {what}")
        return _missing(capability, f"the core refuses {what}")

    async def command(self, cmd: str) -> dict[str, Any] | None:
        """Run a read-back command; its response, or ``None`` when the core refused it."""
        try:
            return await self.api.core.command(cmd, timeout=_PROBE_TIMEOUT_S)
        except (CoreError, CallTimeoutError):
            return None

    # ------------------------------------------------------------------ capabilities

    async def run(self, capability: Capability) -> CapabilityResult:
        return await _PROBES[capability](self)

    async def service_requests(self) -> CapabilityResult:
        return await self.form(
            Capability.SERVICE_REQUESTS,
            cmds.send_service_response(_NOBODY, "cHJvYmU", {}),
            what="/_service_response",
        )

    async def service_request_send(self) -> CapabilityResult:
        cap = Capability.SERVICE_REQUEST_SEND
        unsigned = await self.form(
            cap,
            cmds.send_service_request(_NOBODY, _CONTACT_LINK, {}, timeout_s=1),
            what="/_service_request … timeout=",
        )
        if unsigned.status is not CapabilityStatus.OK:
            return unsigned
        return await self.form(
            cap,
            cmds.send_service_request(_NOBODY, _CONTACT_LINK, {}, timeout_s=1, sign_key=_SIGN_KEY),
            what="/_service_request … timeout= sign_key=",
        )

    async def short_links(self) -> CapabilityResult:
        return await self.form(
            Capability.SHORT_LINKS,
            cmds.add_my_address_short_link(_NOBODY),
            what="/_short_link_address",
        )

    async def address_pq_ratchet(self) -> CapabilityResult:
        return await self.form(
            Capability.ADDRESS_PQ_RATCHET,
            cmds.create_my_address(_NOBODY, pq_ratchet=True),
            cmds.create_my_address(_NOBODY),
            what="/_address … pq_ratchet=on",
        )

    async def custom_data(self) -> CapabilityResult:
        return await self.form(
            Capability.CUSTOM_DATA,
            cmds.set_custom_data(ContactRef(_NOBODY), None),
            what="/_set custom",
        )

    async def prepared_chats(self) -> CapabilityResult:
        cap = Capability.PREPARED_CHATS
        data, group_data = _contact_link_data(), _group_link_data()
        contact = await self.form(
            cap,
            cmds.prepare_contact(_NOBODY, _CONTACT_LINK, data, domain=_SCRATCH_NAME),
            cmds.prepare_contact(_NOBODY, _CONTACT_LINK, data),
            what="/_prepare contact … domain=",
        )
        if contact.status is not CapabilityStatus.OK:
            return contact
        group = await self.form(
            cap,
            cmds.prepare_group(_NOBODY, _GROUP_LINK, group_data, direct=False),
            cmds.prepare_group(_NOBODY, _GROUP_LINK, group_data),
            what="/_prepare group … direct=off",
        )
        if group.status is not CapabilityStatus.OK:
            return group
        return _ok(
            cap, "the core parses /_prepare contact … domain= and /_prepare group … direct=off"
        )

    async def simplex_names(self) -> CapabilityResult:
        return await self.form(
            Capability.SIMPLEX_NAMES,
            cmds.connect_plan(_NOBODY, "@" + _SCRATCH_NAME),
            cmds.connect_plan(_NOBODY, _CONTACT_LINK),
            what="a SimpleX name as a /_connect plan target",
        )

    async def business_addresses(self) -> CapabilityResult:
        return await self.form(
            Capability.BUSINESS_ADDRESSES,
            cmds.set_address_settings(
                _NOBODY, {"businessAddress": True, "autoAccept": {"acceptIncognito": False}}
            ),
            what="address settings with businessAddress",
        )

    async def live_messages(self) -> CapabilityResult:
        return await self.form(
            Capability.LIVE_MESSAGES,
            cmds.send_text(ContactRef(_NOBODY), "probe", live=True),
            cmds.send_text(ContactRef(_NOBODY), "probe"),
            what="/_send … live=on",
        )

    async def signed_messages(self) -> CapabilityResult:
        return await self.form(
            Capability.SIGNED_MESSAGES,
            cmds.send_text(ContactRef(_NOBODY), "probe", sign=True),
            cmds.send_text(ContactRef(_NOBODY), "probe"),
            what="/_send … sign=on",
        )

    async def group_invitations(self) -> CapabilityResult:
        return await self.form(
            Capability.GROUP_INVITATIONS,
            cmds.set_auto_accept_group_invitations(_NOBODY, False),
            what="/_set accept group invitations",
        )

    # ------------------------------------------------------------------ read-backs

    async def protocols_preference(self) -> CapabilityResult:
        cap = Capability.PROTOCOLS_PREFERENCE
        if self.written_profile is not None:
            if isinstance(_get(self.written_profile, "preferences", "protocols"), Mapping):
                return _ok(cap, "the profile written with a protocols preference kept it")
            return _missing(cap, "the core dropped the protocols preference of the profile written")
        if self.user_id is None:
            return _unknown(cap, "no user to read a profile back with")
        user = await self.api.active_user()
        own = user is not None and int(user["userId"]) == self.user_id
        if own and isinstance(_get(user, "profile", "preferences", "protocols"), Mapping):
            return _ok(cap, "the user's profile keeps its protocols preference")
        if not self.scratch:
            return _unknown(cap, "the profile has no protocols to read back" + _NOT_PROBED)
        resp = await self.command(
            cmds.prepare_contact(
                self.user_id, _CONTACT_LINK, _contact_link_data({"protocols": _SCRATCH_PROTOCOLS})
            )
        )
        contact = _get(resp, "chat", "chatInfo", "contact")
        if not isinstance(contact, Mapping) or not isinstance(contact.get("contactId"), int):
            return _unknown(cap, "the core refused a scratch prepared contact")
        kept = _get(contact, "profile", "preferences", "protocols")
        await self.command(cmds.delete_chat(ContactRef(contact["contactId"]), notify=False))
        if isinstance(kept, Mapping):
            return _ok(cap, "a scratch profile's protocols preference was kept")
        return _missing(cap, "the core dropped a scratch profile's protocols preference")

    async def group_protocols_preference(self) -> CapabilityResult:
        cap = Capability.GROUP_PROTOCOLS_PREFERENCE
        if self.user_id is None:
            return _unknown(cap, "no user to read a group profile back with")
        if not self.scratch:
            return _unknown(cap, "needs a scratch group" + _NOT_PROBED)
        resp = await self.command(
            cmds.prepare_group(
                self.user_id, _GROUP_LINK, _group_link_data({"protocols": _SCRATCH_PROTOCOLS})
            )
        )
        info = _get(resp, "chat", "chatInfo", "groupInfo")
        if not isinstance(info, Mapping) or not isinstance(info.get("groupId"), int):
            return _unknown(cap, "the core refused a scratch prepared group")
        kept = _get(info, "groupProfile", "groupPreferences", "protocols")
        await self.command(cmds.delete_chat(GroupRef(info["groupId"]), notify=False))
        if isinstance(kept, Mapping):
            return _ok(cap, "a scratch group profile's protocols preference was kept")
        return _missing(cap, "the core dropped a scratch group profile's protocols preference")

    async def address_serves(self) -> CapabilityResult:
        cap = Capability.ADDRESS_SERVES
        if self.written_address_settings is not None:
            if "serves" in self.written_address_settings:
                return _ok(cap, "the address settings written with serves kept it")
            return _missing(cap, "the core dropped serves from the address settings written")
        if self.user_id is None:
            return _unknown(cap, "no user to read address settings back with")
        try:
            address = await self.api.show_address(self.user_id)
        except (CoreError, UnexpectedResponseError, CallTimeoutError):
            return _unknown(cap, "the core did not show the user's address")
        current = _get(address, "addressSettings")
        if isinstance(current, Mapping) and "serves" in current:
            return _ok(cap, "the address settings keep serves")
        if not self.scratch:
            return _unknown(cap, "the address has no serves to read back" + _NOT_PROBED)
        if address is None:
            return await self._scratch_address()
        settings = dict(current) if isinstance(current, Mapping) else {"businessAddress": False}
        settings.setdefault("businessAddress", False)
        kept = await self._serves_kept(settings)
        # Restored as it was, whatever the answer (no pq_ratchet=: the keys stay as they are).
        await self.command(cmds.set_address_settings(self.user_id, settings))
        return _serves_result(kept, "the address settings")

    async def _scratch_address(self) -> CapabilityResult:
        assert self.user_id is not None
        created = await self.command(cmds.create_my_address(self.user_id))
        if created is None:
            return _unknown(Capability.ADDRESS_SERVES, "the core refused a scratch address")
        try:
            kept = await self._serves_kept({"businessAddress": False})
        finally:
            await self.command(cmds.delete_my_address(self.user_id))
        return _serves_result(kept, "a scratch address's settings")

    async def _serves_kept(self, settings: Mapping[str, Any]) -> bool | None:
        assert self.user_id is not None
        resp = await self.command(
            cmds.set_address_settings(self.user_id, {**settings, "serves": _SCRATCH_SERVES})
        )
        found = _get(resp, "contactLink", "addressSettings")
        if not isinstance(found, Mapping):
            return None
        return "serves" in found


def _serves_result(kept: bool | None, where: str) -> CapabilityResult:
    cap = Capability.ADDRESS_SERVES
    if kept is None:
        return _unknown(cap, f"the core refused {where} with a scratch serves")
    if kept:
        return _ok(cap, f"{where} kept a scratch serves")
    return _missing(cap, f"the core dropped serves from {where}")


def _ok(capability: Capability, evidence: str) -> CapabilityResult:
    return CapabilityResult(capability, CapabilityStatus.OK, evidence)


def _missing(capability: Capability, evidence: str) -> CapabilityResult:
    return CapabilityResult(capability, CapabilityStatus.MISSING, evidence)


def _unknown(capability: Capability, evidence: str) -> CapabilityResult:
    return CapabilityResult(capability, CapabilityStatus.UNKNOWN, evidence)


_PROBES: Final = {
    Capability.SERVICE_REQUESTS: _Probe.service_requests,
    Capability.SERVICE_REQUEST_SEND: _Probe.service_request_send,
    Capability.PROTOCOLS_PREFERENCE: _Probe.protocols_preference,
    Capability.GROUP_PROTOCOLS_PREFERENCE: _Probe.group_protocols_preference,
    Capability.ADDRESS_SERVES: _Probe.address_serves,
    Capability.SHORT_LINKS: _Probe.short_links,
    Capability.ADDRESS_PQ_RATCHET: _Probe.address_pq_ratchet,
    Capability.CUSTOM_DATA: _Probe.custom_data,
    Capability.PREPARED_CHATS: _Probe.prepared_chats,
    Capability.SIMPLEX_NAMES: _Probe.simplex_names,
    Capability.BUSINESS_ADDRESSES: _Probe.business_addresses,
    Capability.LIVE_MESSAGES: _Probe.live_messages,
    Capability.SIGNED_MESSAGES: _Probe.signed_messages,
    Capability.GROUP_INVITATIONS: _Probe.group_invitations,
}

#: The capabilities whose probe writes and reads back a value (the others only parse).
_READ_BACKS: Final = frozenset(
    {
        Capability.PROTOCOLS_PREFERENCE,
        Capability.GROUP_PROTOCOLS_PREFERENCE,
        Capability.ADDRESS_SERVES,
    }
)


class _Known:
    """What was found of one core so far."""

    def __init__(self) -> None:
        self.lock = anyio.Lock()
        self.version: str | None = None
        self.version_asked = False
        self.results: dict[Capability, CapabilityResult] = {}


_KNOWN: weakref.WeakKeyDictionary[ChatCore, _Known] = weakref.WeakKeyDictionary()


async def probe_core(
    core: ChatAPI | ChatCore,
    capabilities: Iterable[Capability | str] | None = None,
    *,
    user_id: int | None = None,
    scratch: bool = True,
    refresh: bool = False,
    written_profile: Mapping[str, Any] | None = None,
    written_address_settings: Mapping[str, Any] | None = None,
) -> CoreCapabilities:
    """Find out the core's version and which capabilities it has.

    Example: ``caps = await probe_core(api)``, then ``caps.has(Capability.SERVICE_REQUESTS)``,
    ``caps.missing``, ``caps.to_json()``.

    Args:
        core: an entered :class:`ChatCore`, or a :class:`ChatAPI` over one.
        capabilities: which to probe (default: every :class:`Capability`); the result holds
            these, in :class:`Capability` order.
        user_id: the user whose profile and address the read-back probes read (default: the
            active user; with no user they are ``unknown``).
        scratch: let the read-back probes use scratch values (a prepared contact or group, the
            address settings with a scratch ``serves``, a scratch address when the user has
            none), deleted or restored at once. ``False``: they read only what the user has.
        refresh: probe again what was found before (a core may have been upgraded).
        written_profile: the user's profile as the core answered after the caller wrote it
            with a ``protocols`` preference (``/_profile``): read for ``protocols-preference``
            instead of anything else (a bot has just written its declaration).
        written_address_settings: the address settings as the core answered after the caller
            wrote them with ``serves``: read for ``address-serves`` instead of anything else.

    Returns:
        The version and one result per capability asked for. A result found before for this
        core is reused (unless ``refresh``).

    Raises:
        CoreConnectionError: the connection to the core was lost.
    """
    api = core if isinstance(core, ChatAPI) else ChatAPI(core)
    wanted = list(Capability) if capabilities is None else [Capability(c) for c in capabilities]
    known = _KNOWN.get(api.core)
    if known is None:
        known = _KNOWN[api.core] = _Known()
    async with known.lock:
        if refresh or not known.version_asked:
            known.version = await _version(api)
            known.version_asked = True
        todo = [c for c in wanted if refresh or c not in known.results]
        if todo:
            if user_id is None and any(c in _READ_BACKS for c in todo):
                user = await api.active_user()
                user_id = int(user["userId"]) if user is not None else None
            probe = _Probe(api, user_id, scratch, written_profile, written_address_settings)
            found: dict[Capability, CapabilityResult] = {}
            for capability in todo:
                found[capability] = result = await probe.run(capability)
                if not result.evidence.endswith(_NOT_PROBED):
                    # Kept: one not probed (no scratch values allowed) is asked again next time.
                    known.results[capability] = result
        else:
            found = {}
        results = tuple(found.get(c) or known.results[c] for c in Capability if c in wanted)
        return CoreCapabilities(known.version, results)


async def _version(api: ChatAPI) -> str | None:
    try:
        info = await api.show_version()
    except (CoreError, UnexpectedResponseError, CallTimeoutError):
        return None
    version = info.get("version")
    return version if isinstance(version, str) else None
