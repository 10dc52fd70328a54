"""Core profiles: which real chat core a simulated core behaves as.

The simulator's own grammar and records are the newest core, as the seeds describe it (the
``spec`` profile). Real users run older cores, and a toolkit that works on the newest one can
fail on theirs in ways no test shows. A :class:`CoreProfile` is a table of the differences of
one real core from the spec profile, each row citing the core source it comes from:

- **commands**: patterns of the spec grammar that this core does not parse, or parses in a
  shorter form (:class:`CommandChange`); the core's grammar is the spec grammar edited by the
  rows (``Grammar.edited``, made by ``SimCore``), so what a real core refuses gets
  ``commandError``;
- **records**: the keys the core's records have (:class:`KeptKeys`). The core decodes the JSON
  it is given (a profile, preferences, address settings, a link's data) into Haskell records,
  and a key the record has no field for is dropped: it is not stored, not echoed and not sent
  on. The simulator drops it where the core would, on the commands' JSON and on what the core
  receives from peers or reads from a link;
- **shapes**: how the core writes a field that newer cores write otherwise (``connStatus`` as
  a string, not an object);
- **version**: what ``/version`` (``/v``) answers.

Sources (``shared/reference/core-versions.md`` and the repository ``simplex-chat/simplex-chat``):
``src/Simplex/Chat/Library/Commands.hs`` at 000f4df (``chatCommandP``, the only readable
parser, a 6.4-era core), ``src/Simplex/Chat/Types.hs`` and ``Types/Preferences.hs`` at 000f4df,
``bots/api/COMMANDS.md`` at 03c8bf5 (the newest generated command docs), ``bots/api/TYPES.md``
at 011bc09, and the official ``simplex_chat`` 7.0.2 Python package's ``simplex_chat/types``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "CORE_PROFILES",
    "DEFAULT_PROFILE",
    "CommandChange",
    "CoreProfile",
    "CoreVersion",
    "KeptKeys",
    "Source",
    "core_profile",
]

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Source:
    """Where a row of a profile comes from: a file of the core's repository (or a package) at a
    commit, and what in it."""

    file: str
    commit: str
    what: str

    def __str__(self) -> str:
        return f"{self.file} @ {self.commit}: {self.what}"


@dataclass(frozen=True, slots=True)
class CommandChange:
    """A command of the spec grammar that this core does not parse (``replacement`` empty), or
    parses in the forms of ``replacement`` only."""

    pattern: str
    replacement: tuple[str, ...]
    source: Source


@dataclass(frozen=True, slots=True)
class KeptKeys:
    """The fields of one of the core's records: keys of its JSON outside them are dropped."""

    record: str
    keys: frozenset[str]
    source: Source


@dataclass(frozen=True, slots=True)
class CoreVersion:
    """What ``/version`` answers (``CRVersionInfo``'s ``CoreVersionInfo``)."""

    version: str
    simplexmq_version: str
    source: Source


#: The records a profile can restrict, and what each one is.
RECORDS: Final = (
    "Profile",
    "Preferences",
    "GroupProfile",
    "GroupPreferences",
    "PublicGroupProfile",
    "AddressSettings",
    "ContactShortLinkData",
)


@dataclass(frozen=True)
class CoreProfile:
    """One real core, as its differences from the spec profile.

    Attributes:
        name: the profile's name (``--core-profile NAME``).
        summary: what core it stands for, in one line.
        version: what ``/version`` answers.
        commands: the spec grammar's patterns this core parses otherwise, or not at all.
        records: the records whose unknown keys this core drops (none: every key is kept).
        conn_status_string: where the core writes ``connStatus`` as a string (``None``: as
            the tagged object the newer cores write).
    """

    name: str
    summary: str
    version: CoreVersion
    commands: tuple[CommandChange, ...] = ()
    records: tuple[KeptKeys, ...] = ()
    conn_status_string: Source | None = None

    def __post_init__(self) -> None:
        unknown = {r.record for r in self.records} - set(RECORDS)
        if unknown:
            raise ValueError(f"{self.name}: unknown records {sorted(unknown)}")

    @property
    def removed_patterns(self) -> list[str]:
        """The spec grammar's patterns this core does not parse."""
        return [c.pattern for c in self.commands if not c.replacement]

    @property
    def replaced_patterns(self) -> dict[str, tuple[str, ...]]:
        """The spec grammar's patterns this core parses in other forms, with those forms."""
        return {c.pattern: c.replacement for c in self.commands if c.replacement}

    # ------------------------------------------------------------------ records

    def _keys(self, record: str) -> frozenset[str] | None:
        for kept in self.records:
            if kept.record == record:
                return kept.keys
        return None

    def _keep(self, record: str, value: Mapping[str, Any]) -> JSON:
        keys = self._keys(record)
        if keys is None:
            return dict(value)
        return {k: v for k, v in value.items() if k in keys}

    def preferences(self, prefs: Mapping[str, Any]) -> JSON:
        """``Preferences`` as this core decodes them."""
        return copy.deepcopy(self._keep("Preferences", prefs))

    def profile(self, profile: Any) -> Any:
        """A ``Profile`` (a user's, a contact's, a link's) as this core decodes it.

        Anything that is not an object is returned as it is (the caller refuses it).
        """
        if not isinstance(profile, Mapping) or not self.records:
            return profile
        out = self._keep("Profile", profile)
        prefs = out.get("preferences")
        if isinstance(prefs, Mapping):
            out["preferences"] = self._keep("Preferences", prefs)
        return copy.deepcopy(out)

    def group_profile(self, profile: Any) -> Any:
        """A ``GroupProfile`` as this core decodes it."""
        if not isinstance(profile, Mapping) or not self.records:
            return profile
        out = self._keep("GroupProfile", profile)
        prefs = out.get("groupPreferences")
        if isinstance(prefs, Mapping):
            out["groupPreferences"] = self._keep("GroupPreferences", prefs)
        public = out.get("publicGroup")
        if isinstance(public, Mapping):
            out["publicGroup"] = self._keep("PublicGroupProfile", public)
        return copy.deepcopy(out)

    def address_settings(self, settings: Mapping[str, Any]) -> JSON:
        """``AddressSettings`` as this core decodes them."""
        return self._keep("AddressSettings", settings)

    def contact_link_data(self, data: Mapping[str, Any]) -> JSON:
        """``ContactShortLinkData`` (what ``/_connect plan`` reads from a link) as this core
        decodes it."""
        out = self._keep("ContactShortLinkData", data)
        if "profile" in out:
            out["profile"] = self.profile(out["profile"])
        return out

    def group_link_data(self, data: Mapping[str, Any]) -> JSON:
        """``GroupShortLinkData`` as this core decodes it (its group profile)."""
        out = dict(data)
        if "groupProfile" in out:
            out["groupProfile"] = self.group_profile(out["groupProfile"])
        return out

    # ------------------------------------------------------------------ shapes

    def shape(self, resp: JSON) -> JSON:
        """A response or event as this core writes it (the spec profile's unchanged)."""
        if self.conn_status_string is None:
            return resp
        return _conn_status_as_string(resp)  # type: ignore[no-any-return]

    def version_info(self) -> JSON:
        """The ``versionInfo`` response of ``/version``."""
        return {
            "type": "versionInfo",
            "versionInfo": {
                "version": self.version.version,
                "simplexmqVersion": self.version.simplexmq_version,
                "simplexmqCommit": "",
            },
            "chatMigrations": [],
            "agentMigrations": [],
        }


def _conn_status_as_string(value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ("connStatus", "pccConnStatus") and isinstance(v, dict) and "type" in v:
                out[k] = v["type"]
            else:
                out[k] = _conn_status_as_string(v)
        return out
    if isinstance(value, list):
        return [_conn_status_as_string(v) for v in value]
    return value


# ---------------------------------------------------------------------------- sources

_PARSER_64 = "src/Simplex/Chat/Library/Commands.hs"
_C64 = "000f4df"
_COMMANDS_MD = "bots/api/COMMANDS.md"
_C_NEW = "03c8bf5"
_TYPES_64 = "src/Simplex/Chat/Types.hs"
_PREFS_64 = "src/Simplex/Chat/Types/Preferences.hs"
_P7 = "simplex_chat 7.0.2 (PyPI), simplex_chat/types/_types.py"


def _p64(what: str) -> Source:
    return Source(_PARSER_64, _C64, what)


def _docs(what: str) -> Source:
    return Source(_COMMANDS_MD, _C_NEW, what)


# The spec grammar's patterns that the tables below change (kept here once, so a change of the
# spec grammar that a table did not follow fails when the profile's grammar is made).
_START = (
    "/_start[ main=<main:onoff>][ snd_files=<sndFiles:onoff>]"
    "[ large_link_data=<largeLinkData:onoff>][ service_requests=<serviceRequests:onoff>]"
)
_ADDRESS = "/_address <userId:int>[ pq_ratchet=<pq:onoff>]"
_SHORT_LINK = "/_short_link_address <userId:int>[ pq_ratchet=<pq:onoff>]"
_ADDRESS_SETTINGS = "/_address_settings <userId:int>[ pq_ratchet=<pq:onoff>] <settings:json>"
_ACCEPT_MEMBER_CONTACTS = "/_set accept member contacts <userId:int> <on:onoff>"
_ACCEPT_GROUP_INVITATIONS = "/_set accept group invitations <userId:int> <on:onoff>"
_REJECT = "/_reject <reqId:int>[ notify=<notify:onoff>]"
_PLAN = "/_connect plan <userId:int> <target:word>[ resolve=<resolve:resolve>][ sig=<sig:json>]"
_PREPARE_CONTACT = (
    "/_prepare contact <userId:int> <fullLink:word>[ <shortLink:link>]"
    "[ domain=<domain:word>] <linkData:json>"
)
_PREPARE_GROUP = (
    "/_prepare group <userId:int> <fullLink:word>[ <shortLink:link>]"
    "[ direct=<direct:onoff>][ domain=<domain:word>] <linkData:json>"
)
_SEND_JSON = (
    "/_send <ref:sendref>[ live=<live:onoff>][ ttl=<ttl:ttl>][ sign=<sign:onoff>]"
    " json <messages:json>"
)
_SEND_TEXT = (
    "/_send <ref:sendref>[ live=<live:onoff>][ ttl=<ttl:ttl>][ sign=<sign:onoff>] text <text:text>"
)
_SET_CUSTOM = "/_set custom <ref:chatref>[ <data:json>]"
_GROUPS = "/_groups <userId:int>[ @<contactId:int>][ <search:rest>]"
_PUBLIC_GROUP = (
    "/_public group <userId:int>[ incognito=<incognito:onoff>] <relays:ids> <profile:json>"
)
_PUBLIC_GROUP_NO_RELAYS = "/_public group <userId:int>[ incognito=<incognito:onoff>] <profile:json>"
_SERVICE_REQUEST = (
    "/_service_request <userId:int> <target:word>[ timeout=<timeout:num>]"
    "[ sign_key=<signKey:word>] <request:rest>"
)
_SERVICE_RESPONSE = "/_service_response <userId:int> <requestId:word> <response:rest>"

_V70_DOCS_ONLY = (
    "COMMANDS.md is generated from the newest parser but lists only the bot API; for commands "
    "it does not list, the 6.4 parser's form is kept (no newer parser is readable)"
)

#: The newest core, as the seeds and the newest docs describe it: the simulator as it is.
SPEC: Final = CoreProfile(
    name="spec",
    summary="the newest core, as the seeds describe it (every command and key the spec uses)",
    version=CoreVersion(
        "7.1.0.14",
        "6.5.5.0",
        Source(
            "seed 000 (the MCP server plan)",
            "draft 2026-10-17",
            "Decisions: peer type agent from core 7.1.0.14; simplexmq 6.5.5.0 at 92598c2",
        ),
    ),
)

#: A core as the official simplex_chat 7.0.2 types and the newest bots/api docs describe it.
V7_0: Final = CoreProfile(
    name="v7.0",
    summary=(
        "a core as simplex_chat 7.0.2's types and the newest bots/api docs describe it: Service "
        "RPC responses, no requests; no protocols or serves keys"
    ),
    version=CoreVersion("7.0.2", "6.5.2", Source(_P7, "7.0.2", "the package's version")),
    commands=(
        CommandChange(
            _SHORT_LINK,
            ("/_short_link_address <userId:int>",),
            _p64(f"APIAddMyAddressShortLink <$> A.decimal; {_V70_DOCS_ONLY}"),
        ),
        CommandChange(
            _REJECT,
            ("/_reject <reqId:int>",),
            _docs("APIRejectContact syntax /_reject <contactReqId> (notify not in the syntax)"),
        ),
        CommandChange(
            _PLAN,
            ("/_connect plan <userId:int> <target:word>",),
            _docs("APIConnectPlan syntax /_connect plan <userId> <connectTarget> (a link or name)"),
        ),
        CommandChange(
            _PREPARE_CONTACT,
            ("/_prepare contact <userId:int> <fullLink:word>[ <shortLink:link>] <linkData:json>",),
            _p64(f"APIPrepareContact: connLinkP then jsonP, no domain=; {_V70_DOCS_ONLY}"),
        ),
        CommandChange(
            _PREPARE_GROUP,
            ("/_prepare group <userId:int> <fullLink:word>[ <shortLink:link>] <linkData:json>",),
            _p64(f"APIPrepareGroup: connLinkP' then jsonP, no direct=/domain=; {_V70_DOCS_ONLY}"),
        ),
        CommandChange(
            _PUBLIC_GROUP_NO_RELAYS,
            (),
            _docs("APINewPublicGroup: /_public group <userId>[ incognito=on] <relayIds> <json>"),
        ),
        CommandChange(
            _SERVICE_REQUEST,
            (),
            _docs("Service commands: APISendServiceResponse only; /_service_request is seed-only"),
        ),
    ),
    records=(
        KeptKeys(
            "Profile",
            frozenset(
                {
                    "displayName",
                    "fullName",
                    "shortDescr",
                    "description",
                    "image",
                    "contactLink",
                    "preferences",
                    "peerType",
                    "badge",
                    "contactDomain",
                }
            ),
            Source(_P7, "7.0.2", "class Profile"),
        ),
        KeptKeys(
            "Preferences",
            frozenset(
                {
                    "timedMessages",
                    "fullDelete",
                    "reactions",
                    "voice",
                    "files",
                    "calls",
                    "sessions",
                    "commands",
                }
            ),
            Source(_P7, "7.0.2", "class Preferences: no protocols"),
        ),
        KeptKeys(
            "GroupProfile",
            frozenset(
                {
                    "displayName",
                    "fullName",
                    "shortDescr",
                    "description",
                    "image",
                    "publicGroup",
                    "groupPreferences",
                    "memberAdmission",
                }
            ),
            Source(_P7, "7.0.2", "class GroupProfile"),
        ),
        KeptKeys(
            "GroupPreferences",
            frozenset(
                {
                    "timedMessages",
                    "directMessages",
                    "fullDelete",
                    "reactions",
                    "voice",
                    "files",
                    "simplexLinks",
                    "reports",
                    "history",
                    "support",
                    "sessions",
                    "comments",
                    "signMessages",
                    "commands",
                }
            ),
            Source(_P7, "7.0.2", "class GroupPreferences: no protocols"),
        ),
        KeptKeys(
            "PublicGroupProfile",
            frozenset({"groupType", "groupLink", "publicGroupId", "publicGroupAccess"}),
            Source(_P7, "7.0.2", "class PublicGroupProfile: no audience, changeFrequency"),
        ),
        KeptKeys(
            "AddressSettings",
            frozenset({"businessAddress", "autoAccept", "autoReply"}),
            Source(_P7, "7.0.2", "class AddressSettings: no serves"),
        ),
        KeptKeys(
            "ContactShortLinkData",
            frozenset({"profile", "message", "business", "localBadge"}),
            Source(_P7, "7.0.2", "class ContactShortLinkData: no serves"),
        ),
    ),
)

#: A 6.4-era core: the command parser of Commands.hs at 000f4df, the only parser readable.
V6_4: Final = CoreProfile(
    name="v6.4",
    summary=(
        "a 6.4-era core (Commands.hs at 000f4df): no Service RPC, pq_ratchet, sign=, custom "
        "data, direct=, SimpleX names; no protocols, serves or peerType; connStatus a string"
    ),
    version=CoreVersion("6.4.0", "6.4.0", _p64("the era of the parser read (v6.4)")),
    commands=(
        CommandChange(
            _START,
            (
                "/_start main=<main:onoff>[ snd_files=<sndFiles:onoff>]"
                "[ large_link_data=<largeLinkData:onoff>]",
                "/_start",
            ),
            _p64("StartChat: main=, snd_files=, large_link_data= (no service_requests)"),
        ),
        CommandChange(
            _ADDRESS, ("/_address <userId:int>",), _p64("APICreateMyAddress <$> A.decimal")
        ),
        CommandChange(
            _SHORT_LINK,
            ("/_short_link_address <userId:int>",),
            _p64("APIAddMyAddressShortLink <$> A.decimal"),
        ),
        CommandChange(
            _ADDRESS_SETTINGS,
            ("/_address_settings <userId:int> <settings:json>",),
            _p64("APISetAddressSettings <$> A.decimal <* A.space <*> jsonP"),
        ),
        CommandChange(_ACCEPT_MEMBER_CONTACTS, (), _p64("no /_set accept member contacts")),
        CommandChange(_ACCEPT_GROUP_INVITATIONS, (), _p64("no /_set accept group invitations")),
        CommandChange(_REJECT, ("/_reject <reqId:int>",), _p64("APIRejectContact <$> A.decimal")),
        CommandChange(
            _PLAN,
            ("/_connect plan <userId:int> <target:link>",),
            _p64("APIConnectPlan <$> A.decimal <* A.space <*> strP (a link; no names)"),
        ),
        CommandChange(
            _PREPARE_CONTACT,
            ("/_prepare contact <userId:int> <fullLink:word>[ <shortLink:link>] <linkData:json>",),
            _p64("APIPrepareContact: connLinkP then jsonP (no domain=)"),
        ),
        CommandChange(
            _PREPARE_GROUP,
            ("/_prepare group <userId:int> <fullLink:word>[ <shortLink:link>] <linkData:json>",),
            _p64("APIPrepareGroup: connLinkP' then jsonP (no direct=, domain=)"),
        ),
        CommandChange(
            _SEND_JSON,
            ("/_send <ref:sendref>[ live=<live:onoff>][ ttl=<ttl:ttl>] json <messages:json>",),
            _p64("APISendMessages: liveMessageP, sendMessageTTLP (no sign=)"),
        ),
        CommandChange(
            _SEND_TEXT,
            ("/_send <ref:sendref>[ live=<live:onoff>][ ttl=<ttl:ttl>] text <text:text>",),
            _p64("APISendMessages: liveMessageP, sendMessageTTLP (no sign=)"),
        ),
        CommandChange(_SET_CUSTOM, (), _p64("no /_set custom")),
        CommandChange(
            _GROUPS,
            ("/_groups<userId:int>[ @<contactId:int>][ <search:rest>]",),
            _p64('"/_groups" *> (APIListGroups <$> A.decimal ...): no space before the user ID'),
        ),
        CommandChange(_PUBLIC_GROUP, (), _p64("no /_public group (no channels)")),
        CommandChange(_PUBLIC_GROUP_NO_RELAYS, (), _p64("no /_public group (no channels)")),
        CommandChange(_SERVICE_REQUEST, (), _p64("no Service RPC commands")),
        CommandChange(_SERVICE_RESPONSE, (), _p64("no Service RPC commands")),
    ),
    records=(
        KeptKeys(
            "Profile",
            frozenset(
                {"displayName", "fullName", "shortDescr", "image", "contactLink", "preferences"}
            ),
            Source(_TYPES_64, _C64, "data Profile (no peerType, description, contactDomain)"),
        ),
        KeptKeys(
            "Preferences",
            frozenset({"timedMessages", "fullDelete", "reactions", "voice", "calls"}),
            Source(_PREFS_64, _C64, "data Preferences (no protocols, commands)"),
        ),
        KeptKeys(
            "GroupProfile",
            frozenset(
                {
                    "displayName",
                    "fullName",
                    "shortDescr",
                    "description",
                    "image",
                    "groupPreferences",
                    "memberAdmission",
                }
            ),
            Source(_TYPES_64, _C64, "data GroupProfile (no publicGroup)"),
        ),
        KeptKeys(
            "GroupPreferences",
            frozenset(
                {
                    "timedMessages",
                    "directMessages",
                    "fullDelete",
                    "reactions",
                    "voice",
                    "files",
                    "simplexLinks",
                    "reports",
                    "history",
                }
            ),
            Source(_PREFS_64, _C64, "data GroupPreferences (no protocols, commands)"),
        ),
        KeptKeys(
            "AddressSettings",
            frozenset({"businessAddress", "autoAccept", "autoReply"}),
            _p64("autoAcceptP: AddressSettings business autoAccept autoReply (no serves)"),
        ),
        KeptKeys(
            "ContactShortLinkData",
            frozenset({"profile", "message", "business"}),
            Source("bots/api/TYPES.md", "011bc09", "ContactShortLinkData (no serves)"),
        ),
    ),
    conn_status_string=Source("bots/api/TYPES.md", "011bc09", "ConnStatus: an enum string"),
)

#: The profiles, by name.
CORE_PROFILES: Final[Mapping[str, CoreProfile]] = {p.name: p for p in (SPEC, V7_0, V6_4)}

#: The profile of a core that is given none.
DEFAULT_PROFILE: Final = SPEC


def core_profile(name: str | CoreProfile | None) -> CoreProfile:
    """The profile named ``name`` (``None``: the default, ``spec``).

    Raises:
        ValueError: no profile has that name.
    """
    if isinstance(name, CoreProfile):
        return name
    if name is None:
        return DEFAULT_PROFILE
    found = CORE_PROFILES.get(name)
    if found is None:
        raise ValueError(
            f"unknown core profile {name!r}; the profiles are {', '.join(CORE_PROFILES)}"
        )
    return found
