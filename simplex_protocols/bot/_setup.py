"""What a bot sets up in its chat core before it answers calls: its user and profile (with the
``protocols`` declaration), the chat controller with service requests on, and its contact
address with ratchet keys and link data.

The plan is computed by pure functions (:func:`plan_profile`, :func:`plan_address_settings`)
and carried out by :func:`set_up_user`, :func:`start_core` and :func:`set_up_address`, each a
short sequence of core commands. The exact sequence, for a new core::

    /user                                     -> noActiveUser
    /_create user {"profile": {...}, "pastTimestamp": false}
    /_start main=on service_requests=on       (RPC-CORE-1)
    /_show_address 1                          -> userContactLinkNotFound
    /_address 1 pq_ratchet=on                 (RPC-CORE-2)
    /_address_settings 1 pq_ratchet=on {"businessAddress": false, "autoAccept": ..., "serves": [...]}

and on a later start the same, with ``/_profile`` only when the profile differs (then
``/_groups`` and a ``/_group_profile`` for each business chat whose declaration is out of date,
:func:`update_business_chats`), and without ``/_create user`` and ``/_address``. On a core that lacks what a step uses (found by
:func:`simplex_protocols.core.probe_core`), the step is taken without it: ``/_start main=on``
without service requests, the address without ``pq_ratchet=`` or without a short link.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from simplex_protocols.core import ChatAPI
from simplex_protocols.declarations import (
    ProtocolDeclarations,
    business_group_preferences,
    with_protocols,
)

__all__ = [
    "AddressSetup",
    "ProfileSpec",
    "plan_address_settings",
    "plan_profile",
    "set_group_invitations",
    "set_up_address",
    "set_up_user",
    "start_core",
    "update_business_chats",
]

logger = logging.getLogger("simplex_protocols.bot")

#: Members of a LocalProfile that the core keeps for us and never takes in a Profile.
_LOCAL_ONLY: Final = frozenset({"profileId", "localAlias", "localBadge", "contactDomainVerified"})


@dataclass(frozen=True, slots=True)
class ProfileSpec:
    """The profile a bot runs with.

    Attributes:
        display_name: the profile's display name.
        peer_type: ``"bot"`` or ``"agent"``.
        description: the profile's short description (``shortDescr``), or ``None`` for none.
        full_name: the profile's full name.
        commands: the command menu for people (``preferences.commands``), or ``None`` to keep
            the menu the profile has.
    """

    display_name: str
    peer_type: str
    description: str | None
    full_name: str
    commands: tuple[Mapping[str, Any], ...] | None


@dataclass(frozen=True, slots=True)
class AddressSetup:
    """What the bot's contact address looks like once it is set up.

    Attributes:
        link: the address's short link when it has one, else its full link.
        full_link: the full link.
        short_link: the short link, if any.
        created: whether it was created in this start.
        settings: the address settings sent (``/_address_settings``).
        kept_settings: the settings as the core answered (what its records kept of them).
    """

    link: str
    full_link: str
    short_link: str | None
    created: bool
    settings: Mapping[str, Any]
    kept_settings: Mapping[str, Any] | None = None


def _as_profile(local_profile: Mapping[str, Any] | None) -> dict[str, Any]:
    if not local_profile:
        return {}
    return {k: copy.deepcopy(v) for k, v in local_profile.items() if k not in _LOCAL_ONLY}


def plan_profile(
    current: Mapping[str, Any] | None,
    spec: ProfileSpec,
    declarations: ProtocolDeclarations,
) -> dict[str, Any]:
    """The profile to write: ``current`` with the bot's values and its declaration.

    Every member the bot does not own is kept (an image, the address in the profile, a
    SimpleX name claim); in ``preferences`` every key but ``protocols`` is kept, and
    ``commands`` too unless ``spec.commands`` replaces it (DECL-PROTO-1).

    Raises:
        DeclarationError: the command menu lists ``/_call`` (``call_in_commands``,
            DECL-PROTO-11), or a declaration cannot be written.
    """
    profile = _as_profile(current)
    profile["displayName"] = spec.display_name
    profile["fullName"] = spec.full_name
    if spec.description is None:
        profile.pop("shortDescr", None)
    else:
        profile["shortDescr"] = spec.description
    prefs = profile.get("preferences")
    prefs = dict(prefs) if isinstance(prefs, Mapping) else {}
    if spec.commands is not None:
        if spec.commands:
            prefs["commands"] = [copy.deepcopy(dict(c)) for c in spec.commands]
        else:
            prefs.pop("commands", None)
    # DECL-PROTO-1: the declaration is the `protocols` key of the user profile's preferences;
    # DECL-PROTO-11: with_protocols refuses a menu that lists /_call.
    profile["preferences"] = with_protocols(prefs, declarations)
    profile["peerType"] = spec.peer_type
    return profile


def profile_differs(current: Mapping[str, Any] | None, planned: Mapping[str, Any]) -> bool:
    """Whether writing ``planned`` would change the profile the core has."""
    now = _as_profile(current)
    if not isinstance(now.get("preferences"), Mapping):
        now["preferences"] = {}
    return now != dict(planned)


def plan_address_settings(
    *, business: bool, welcome: str | None, serves: Sequence[str] | None
) -> dict[str, Any]:
    """The ``AddressSettings`` of the bot's address.

    Contact requests are accepted automatically (``autoAccept``); ``welcome`` becomes the
    automatic reply, which the core also publishes in the link data (``message``);
    ``serves`` is published in the link data beside ``business`` (DECL-SERVES-1, -2).
    """
    settings: dict[str, Any] = {
        "businessAddress": business,
        "autoAccept": {"acceptIncognito": False},
    }
    if welcome is not None:
        settings["autoReply"] = {"type": "text", "text": welcome}
    if serves is not None:
        settings["serves"] = list(serves)
    return settings


async def set_up_user(
    api: ChatAPI,
    spec: ProfileSpec,
    declarations: ProtocolDeclarations,
    *,
    user_id: int | None = None,
) -> tuple[dict[str, Any], bool]:
    """Find or create the bot's user, before the chat is started.

    Args:
        api: the core.
        spec: the profile to create a new user with.
        declarations: the declaration a new user's profile starts with.
        user_id: the user the bot ran as before (from its settings): made active again when
            another user is active. ``None``, or a user that no longer exists: the active
            user, or a new one.

    Returns:
        ``(user, created)``.
    """
    user = await api.active_user()
    if user is not None and user_id is not None and int(user["userId"]) != user_id:
        known = {int(info["user"]["userId"]) for info in await api.list_users()}
        if user_id in known:
            logger.info("Making the bot's user %d active again", user_id)
            user = await api.set_active_user(user_id)
        else:
            logger.warning(
                "The bot's user %d is gone from the core; using the active user %s",
                user_id,
                user["userId"],
            )
    if user is not None:
        return dict(user), False
    profile = plan_profile(None, spec, declarations)
    created = await api.create_active_user(profile)
    logger.info("Created the bot's profile %r (user %s)", spec.display_name, created["userId"])
    return dict(created), True


async def start_core(api: ChatAPI, *, service_requests: bool) -> bool:
    """Start the chat controller, with service requests on when the bot serves Service RPC.

    A core that is already running is stopped and started again with ``service_requests=on``:
    the option is read when the controller starts, and without it the core drops every
    request (RPC-CORE-1).

    Returns:
        Whether the core was already running.
    """
    started = await api.start_chat(service_requests=service_requests)
    if started:
        return False
    if service_requests:
        logger.info("The core was running; starting it again with service requests on")
        await api.stop_chat()
        await api.start_chat(service_requests=True)
    return True


async def update_profile(
    api: ChatAPI,
    user: Mapping[str, Any],
    spec: ProfileSpec,
    declarations: ProtocolDeclarations,
) -> tuple[dict[str, Any], bool]:
    """Write the bot's profile when it differs from the core's (after the chat is started).

    Returns:
        ``(user, updated)``.
    """
    current = user.get("profile")
    current = current if isinstance(current, Mapping) else None
    planned = plan_profile(current, spec, declarations)
    if not profile_differs(current, planned):
        return dict(user), False
    updated = await api.update_profile(int(user["userId"]), planned)
    logger.info("Updated the bot's profile %r", spec.display_name)
    return dict(updated), True


async def update_business_chats(api: ChatAPI, user: Mapping[str, Any]) -> int:
    """Make the business chats the bot owns declare what its profile declares now.

    The core copies the profile's protocols into a business chat when it makes the chat
    (DECL-PROTO-10), and not later. A bot started again serving less would go on claiming, in
    every chat made before, protocols it no longer answers, and DECL-PROTO-16 reads "a
    protocol in a group's groupPreferences is a claim that the group's owners answer it in that
    group". Each such chat gets the profile's declaration again, without ``transports.rpc``,
    which groupPreferences cannot carry (DECL-PROTO-7). Called when the profile was just
    updated: a declaration unchanged since the chats were made needs no update.

    Returns:
        How many chats were updated.
    """
    profile = user.get("profile")
    prefs = profile.get("preferences") if isinstance(profile, Mapping) else None
    if not isinstance(prefs, Mapping):
        return 0
    updated = 0
    for group in await api.list_groups(int(user["userId"])):
        business = group.get("businessChat")
        # On the business's side a business chat is a chat with a customer.
        if not isinstance(business, Mapping) or business.get("chatType") != "customer":
            continue
        if group.get("membership", {}).get("memberRole") != "owner":
            continue
        group_profile: dict[str, Any] = dict(group["groupProfile"])
        current = group_profile.get("groupPreferences")
        planned = business_group_preferences(
            prefs, current if isinstance(current, Mapping) else None
        )
        if planned == current:
            continue
        group_profile["groupPreferences"] = planned
        await api.update_group_profile(int(group["groupId"]), group_profile)
        updated += 1
    if updated:
        logger.info("Updated the declaration of %d business chat(s)", updated)
    return updated


async def set_group_invitations(api: ChatAPI, user: Mapping[str, Any], accept: bool) -> bool:
    """Make the core accept group invitations automatically, or not, when it does otherwise.

    Returns:
        Whether the setting was changed.
    """
    if bool(user.get("autoAcceptGroupInvitations", False)) == accept:
        return False
    await api.set_auto_accept_group_invitations(int(user["userId"]), accept)
    logger.info("Group invitations are %s", "accepted" if accept else "no longer accepted")
    return True


async def set_up_address(
    api: ChatAPI,
    user_id: int,
    settings: Mapping[str, Any],
    *,
    ratchet_keys: bool = True,
    short_links: bool = True,
) -> AddressSetup:
    """Create the contact address, or reuse it, and apply ``settings`` with ratchet keys.

    ``pq_ratchet=on`` goes with every command that creates or updates the address, so an
    address created without ratchet keys gets them too (RPC-CORE-2).

    Args:
        api: the core.
        user_id: the bot's user.
        settings: the AddressSettings.
        ratchet_keys: send ``pq_ratchet=on``; ``False`` on a core that lacks the option
            (``address-pq-ratchet``), whose address then takes no Service RPC requests.
        short_links: add a short link to an address without one; ``False`` on a core that
            lacks ``/_short_link_address``.
    """
    pq = True if ratchet_keys else None
    created = False
    contact_link = await api.show_address(user_id)
    if contact_link is None:
        conn = await api.create_address(user_id, pq_ratchet=pq)
        created = True
        full = str(conn["connFullLink"])
        short = conn.get("connShortLink")
    else:
        conn_link = contact_link["connLinkContact"]
        full = str(conn_link["connFullLink"])
        short = conn_link.get("connShortLink")
    if not short and short_links:
        added = await api.add_address_short_link(user_id, pq_ratchet=pq)
        short = added["connLinkContact"].get("connShortLink")
    updated = await api.set_address_settings(user_id, settings, pq_ratchet=pq)
    conn_link = updated["connLinkContact"]
    full = str(conn_link.get("connFullLink") or full)
    short = conn_link.get("connShortLink") or short
    if created:
        logger.info("Created the bot's contact address")
    kept = updated.get("addressSettings")
    return AddressSetup(
        link=str(short) if short else full,
        full_link=full,
        short_link=str(short) if short else None,
        created=created,
        settings=dict(settings),
        kept_settings=dict(kept) if isinstance(kept, Mapping) else None,
    )
