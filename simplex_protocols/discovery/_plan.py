"""Reading an address's declarations from its link data, without connecting (``/_connect plan``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from simplex_protocols.core import ChatAPI
from simplex_protocols.declarations import (
    ChangeFrequency,
    DeclarationSource,
    EffectiveValue,
    PeerType,
    ProtocolDeclarations,
    Scope,
    effective_audience,
    effective_change_frequency,
    parse_link_data,
    parse_public_group,
    protocols_from_preferences,
)
from simplex_protocols.errors import CoreError, DeclarationError
from simplex_protocols.links import LinkKind

from ._model import WebsiteAddress

__all__ = ["AddressPlan", "plan_address", "read_plan"]


@dataclass(frozen=True, slots=True)
class AddressPlan:
    """What an address's link data declares, read without connecting.

    Attributes:
        target: the link or name as given.
        link: the address's link as the plan names it (the short link when there is one).
        full_link: the full link of the address.
        kind: ``contact``, ``group``, ``channel`` or ``invitation``.
        status: the plan's variant: ``ok`` (can connect), ``known`` (already connected),
            ``ownLink``, ``contactViaAddress``, ``connectingProhibit``,
            ``connectingConfirmReconnect``, ``connecting``, ``noRelays``, ``updateRequired``.
        simplex_name: the SimpleX name the target was resolved from, when it was a name.
        display_name: the profile's (or group's) display name, when the plan has one.
        peer_type: the profile's peer type (``bot``, ``agent``, ...), when given.
        short_description: the profile's short description, when given.
        business: whether the link data marks a business address.
        protocols: the ``protocols`` declaration (of the profile's ``preferences`` for a
            contact address, of ``groupPreferences`` for a group).
        serves: for a contact address, the peer types it serves after the precedence rule
            (DECL-PREC-1): the link data's ``serves``, else the website's audience, else
            ``{human}``.
        audience: for a group or a channel, the same with the public group record's
            ``audience``.
        change_frequency: for a channel, its update frequency after the precedence rule.
        contact_id: the contact's ID when the address is already a contact (``known``,
            ``contactViaAddress``, ``connectingProhibit``).
        group_id: the group's ID when the group is already known.
        website: what the website says about the address, when it came from one.
        notes: where the website and the link data disagree (the link data wins): LLMS-NOTES-10
            and LLMS-NOTES-11 warnings, in words.
        problems: what was wrong in the declarations (ignored parts).
        raw: the core's ``connectionPlan`` response.
    """

    target: str
    link: str | None
    full_link: str | None
    kind: LinkKind
    status: str
    protocols: ProtocolDeclarations
    simplex_name: str | None = None
    display_name: str | None = None
    peer_type: str | None = None
    short_description: str | None = None
    business: bool = False
    serves: EffectiveValue[frozenset[PeerType]] | None = None
    audience: EffectiveValue[frozenset[PeerType]] | None = None
    change_frequency: EffectiveValue[ChangeFrequency | None] | None = None
    contact_id: int | None = None
    group_id: int | None = None
    website: WebsiteAddress | None = None
    notes: tuple[str, ...] = ()
    problems: tuple[DeclarationError, ...] = field(default=(), compare=False)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def address(self) -> str:
        """The address to send to: the plan's link, else the target as given."""
        return self.link or self.full_link or self.target

    @property
    def peers(self) -> EffectiveValue[frozenset[PeerType]] | None:
        """``serves`` for a contact address, ``audience`` for a group or channel."""
        return self.serves if self.serves is not None else self.audience

    def to_json(self) -> dict[str, Any]:
        """The plan as a JSON object (``simplex-call plan --json``)."""
        out: dict[str, Any] = {
            "target": self.target,
            "link": self.link,
            "kind": self.kind.value,
            "planStatus": self.status,
        }
        if self.simplex_name is not None:
            out["simplexName"] = self.simplex_name
        if self.display_name is not None:
            out["displayName"] = self.display_name
        if self.peer_type is not None:
            out["peerType"] = self.peer_type
        if self.short_description is not None:
            out["shortDescription"] = self.short_description
        out["business"] = self.business
        out["protocols"] = {
            name: {
                "versions": list(decl.versions),
                "transports": {"chat": decl.chat, "rpc": decl.rpc},
            }
            for name, decl in self.protocols.items()
        }
        peers = self.peers
        if peers is not None:
            key = "serves" if self.serves is not None else "audience"
            out[key] = {"value": sorted(str(p) for p in peers.value), "source": peers.source.value}
        if self.change_frequency is not None and self.change_frequency.value is not None:
            out["changeFrequency"] = {
                "value": self.change_frequency.value.value,
                "source": self.change_frequency.source.value,
            }
        if self.contact_id is not None:
            out["contactId"] = self.contact_id
        if self.group_id is not None:
            out["groupId"] = self.group_id
        if self.notes:
            out["notes"] = list(self.notes)
        if self.problems:
            out["problems"] = [
                {"code": p.code, "requirement": p.requirement, "position": p.position}
                for p in self.problems
            ]
        return out


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _website_audience(website: WebsiteAddress | None) -> tuple[str, ...] | None:
    return website.audience if website is not None else None


def _name_text(info: Any) -> str | None:
    info = _dict(info)
    domain = _dict(info.get("nameDomain"))
    if not domain:
        return None
    parts = [*reversed([s for s in domain.get("subDomain", []) if isinstance(s, str)])]
    if isinstance(domain.get("domain"), str):
        parts.append(domain["domain"])
    tld = domain.get("nameTLD")
    if tld in ("simplex", "testing"):
        parts.append(tld)
    sigil = "#" if info.get("nameType") == "publicGroup" else "@"
    return sigil + ".".join(parts)


def read_plan(
    target: str, response: Mapping[str, Any], *, website: WebsiteAddress | None = None
) -> AddressPlan:
    """Read a ``connectionPlan`` response into an :class:`AddressPlan` (sans-IO).

    Raises:
        CoreError: the plan is the ``error`` variant (``chatError`` inside).
    """
    plan = _dict(response.get("connectionPlan"))
    conn_link = _dict(response.get("connLink"))
    link = _str(conn_link.get("connShortLink")) or _str(conn_link.get("connFullLink"))
    full_link = _str(conn_link.get("connFullLink"))
    name = _name_text(response.get("planSimplexName"))
    plan_type = plan.get("type")
    if plan_type == "error":
        raise CoreError(_dict(plan.get("chatError")), response=response)
    if plan_type == "contactAddress":
        return _contact_plan(
            target, _dict(plan.get("contactAddressPlan")), link, full_link, name, website, response
        )
    if plan_type == "groupLink":
        return _group_plan(
            target, _dict(plan.get("groupLinkPlan")), link, full_link, name, website, response
        )
    sub = _dict(plan.get("invitationLinkPlan"))
    data = _dict(sub.get("contactSLinkData_"))
    profile = _dict(data.get("profile"))
    protocols = protocols_from_preferences(profile.get("preferences", {}), scope=Scope.PREFERENCES)
    return AddressPlan(
        target=target,
        link=link,
        full_link=full_link,
        kind=LinkKind.INVITATION,
        status=str(sub.get("type", "unknown")),
        protocols=protocols,
        simplex_name=name,
        display_name=_str(profile.get("displayName")),
        peer_type=_str(profile.get("peerType")),
        website=website,
        problems=protocols.problems,
        raw=response,
    )


def _contact_plan(
    target: str,
    sub: dict[str, Any],
    link: str | None,
    full_link: str | None,
    name: str | None,
    website: WebsiteAddress | None,
    response: Mapping[str, Any],
) -> AddressPlan:
    status = str(sub.get("type", "unknown"))
    contact = _dict(sub.get("contact"))
    problems: list[DeclarationError] = []
    if "contactSLinkData_" in sub:
        data = sub.get("contactSLinkData_")
        link_data = parse_link_data(data if data is not None else {})
        problems.extend(link_data.problems)
        profile = _dict(_dict(data).get("profile"))
    else:
        # Known contacts: the plan carries the contact, not the link data; its profile holds
        # the preferences it was connected with, and serves is not known.
        link_data = None
        profile = _dict(contact.get("profile"))
    protocols = protocols_from_preferences(profile.get("preferences", {}), scope=Scope.PREFERENCES)
    problems.extend(protocols.problems)
    serves = effective_audience(link_data, _website_audience(website))
    business = link_data.business if link_data is not None else False
    contact_id = contact.get("contactId")
    return AddressPlan(
        target=target,
        link=link,
        full_link=full_link,
        kind=LinkKind.CONTACT,
        status=status,
        protocols=protocols,
        simplex_name=name,
        display_name=_str(profile.get("displayName")),
        peer_type=_str(profile.get("peerType")),
        short_description=_str(profile.get("shortDescr")),
        business=business,
        serves=serves,
        contact_id=contact_id if isinstance(contact_id, int) else None,
        website=website,
        notes=_notes(website, protocols, serves, business, None),
        problems=tuple(problems),
        raw=response,
    )


def _group_plan(
    target: str,
    sub: dict[str, Any],
    link: str | None,
    full_link: str | None,
    name: str | None,
    website: WebsiteAddress | None,
    response: Mapping[str, Any],
) -> AddressPlan:
    status = str(sub.get("type", "unknown"))
    info = _dict(sub.get("groupSLinkInfo_"))
    data = _dict(sub.get("groupSLinkData_"))
    group_info = _dict(sub.get("groupInfo") or sub.get("groupInfo_"))
    group_profile = _dict(data.get("groupProfile")) or _dict(group_info.get("groupProfile"))
    public = group_profile.get("publicGroup")
    record = parse_public_group(public) if public is not None else None
    is_channel = info.get("direct") is False or (record is not None and record.is_channel)
    protocols = protocols_from_preferences(
        group_profile.get("groupPreferences", {}), scope=Scope.GROUP_PREFERENCES
    )
    problems = list(protocols.problems)
    if record is not None:
        problems.extend(record.problems)
    audience = effective_audience(record, _website_audience(website))
    frequency = (
        effective_change_frequency(record, website.frequency if website is not None else None)
        if is_channel
        else None
    )
    group_id = group_info.get("groupId")
    return AddressPlan(
        target=target,
        link=link,
        full_link=full_link,
        kind=LinkKind.CHANNEL if is_channel else LinkKind.GROUP,
        status=status,
        protocols=protocols,
        simplex_name=name,
        display_name=_str(group_profile.get("displayName")),
        short_description=_str(group_profile.get("shortDescr")),
        audience=audience,
        change_frequency=frequency,
        group_id=group_id if isinstance(group_id, int) else None,
        website=website,
        notes=_notes(website, protocols, audience, None, frequency),
        problems=tuple(problems),
        raw=response,
    )


def _notes(
    website: WebsiteAddress | None,
    protocols: ProtocolDeclarations,
    peers: EffectiveValue[frozenset[PeerType]],
    business: bool | None,
    frequency: EffectiveValue[ChangeFrequency | None] | None,
) -> tuple[str, ...]:
    """LLMS-NOTES-10, LLMS-NOTES-11: where the website and the link data disagree."""
    if website is None:
        return ()
    notes: list[str] = []
    for protocol in website.protocols:
        if protocols.lookup(protocol) is None:
            notes.append(
                f"the website lists {protocol}, but the address does not declare it (LLMS-NOTES-10)"
            )
    if website.audience is not None and peers.source is not DeclarationSource.WEBSITE:
        said = set(website.audience)
        if said != {str(p) for p in peers.value}:
            notes.append(
                f"the website says {', '.join(sorted(said)) or 'nobody'}; the SimpleX "
                f"declaration says {', '.join(sorted(str(p) for p in peers.value)) or 'nobody'},"
                " which wins (LLMS-NOTES-11)"
            )
    if business is not None and website.business is not None and business != website.business:
        notes.append(
            "the website calls it a business contact, but the link data does not"
            if website.business
            else "the link data marks a business address, which the website does not say"
        )
    if (
        frequency is not None
        and website.frequency is not None
        and frequency.source is DeclarationSource.PUBLIC_GROUP
        and frequency.value is not None
        and frequency.value.value != website.frequency
    ):
        notes.append(
            f"the website says {website.frequency}; the channel says {frequency.value.value},"
            " which wins (LLMS-NOTES-11)"
        )
    return tuple(notes)


async def plan_address(
    api: ChatAPI,
    user_id: int,
    target: str,
    *,
    website: WebsiteAddress | None = None,
) -> AddressPlan:
    """Read what an address declares from its link data, without connecting.

    Sends ``/_connect plan <userId> <target>`` (the core retrieves the link data from the
    router, or resolves the SimpleX name first) and reads the declarations: the ``protocols``
    of the profile's preferences (or of the group's ``groupPreferences``), ``business``,
    ``serves`` (contact addresses), and ``audience`` / ``changeFrequency`` (channels and
    public groups). The link data takes precedence over the website's values (DECL-PREC-1);
    where they disagree, :attr:`AddressPlan.notes` says so.

    Args:
        api: the core to ask.
        user_id: our user.
        target: a SimpleX link or a SimpleX name.
        website: what a website says about the address, for precedence and notes.

    Raises:
        CoreError: the core could not plan: an unknown name (``NAME NOT_FOUND``), a deleted
            link (``SMP AUTH``), no name servers, an invalid link (``invalidConnReq``) ...
        CoreConnectionError: the core was lost.
        CommandArgumentError: ``target`` contains whitespace (nothing was sent).
    """
    response = await api.connect_plan(user_id, target)
    return read_plan(target, response, website=website)
