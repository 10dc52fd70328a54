"""Every command the toolkit's builders can produce is one the spec profile's parser reads.

The builders (``simplex_protocols.core.commands``) and the simulator's grammar are written from
the same sources, apart; a builder that writes a form the parser does not read would fail on
every core the simulator stands for. Hypothesis generates valid arguments for each builder and
the grammar of the spec profile must parse the result (the handler is not run: this is the
parser only).
"""

from __future__ import annotations

import inspect
import string
from collections.abc import Callable
from datetime import UTC
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from simplex_protocols.core import ContactRef, GroupRef
from simplex_protocols.core import commands as c
from simplex_protocols.sim import CORE_PROFILES
from simplex_protocols.sim._core import profile_grammar

GRAMMAR = profile_grammar(CORE_PROFILES["spec"])

ids = st.integers(min_value=1, max_value=10**15 - 1)
id_lists = st.lists(ids, min_size=1, max_size=4)
refs = st.one_of(ids.map(ContactRef), ids.map(GroupRef))
flags = st.none() | st.booleans()
tokens = st.text(alphabet=string.ascii_letters + string.digits + "-_.:/#@?=&%", min_size=1)
# Free text ends with something that is not a space: the core drops trailing white space
# before it parses a command (B.dropWhileEnd isSpace), so a text that ends in one loses it and a
# text of spaces only leaves the command without its argument.
texts = st.text(min_size=1).filter(lambda t: t == t.rstrip() and t.strip() != "")
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
objects = st.dictionaries(st.text(), json_values, max_size=4)
roles = st.sampled_from(c.MEMBER_ROLES)
full_links = st.just(
    "simplex:/contact#/?v=2-7&smp=smp%3A%2F%2Fa%40smp1.sim.test%2Fq%23%2F%3Fv%3D1-4%26dh%3Dk"
)
short_links = st.none() | st.just("https://smp1.sim.test/a#aGVsbG8")
times = st.datetimes(timezones=st.just(UTC))
messages = st.none() | texts | st.builds(lambda t: {"type": "text", "text": t}, st.text())

#: Strategies for each builder's arguments (positional tuple, keyword dict).
ARGUMENTS: dict[str, st.SearchStrategy[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "show_active_user": st.just(((), {})),
    "list_users": st.just(((), {})),
    "stop_chat": st.just(((), {})),
    "get_network_config": st.just(((), {})),
    "show_version": st.just(((), {})),
    "create_active_user": st.tuples(
        st.tuples(st.none() | objects),
        st.fixed_dictionaries(
            {},
            optional={
                "past_timestamp": st.booleans(),
                "user_chat_relay": flags,
                "client_service": flags,
            },
        ),
    ),
    "set_active_user": st.tuples(
        st.tuples(ids), st.fixed_dictionaries({}, optional={"view_password": st.text()})
    ),
    "update_profile": st.tuples(st.tuples(ids, objects), st.just({})),
    "set_contact_prefs": st.tuples(st.tuples(ids, objects), st.just({})),
    "start_chat": st.tuples(
        st.just(()),
        st.fixed_dictionaries(
            {},
            optional={"main": st.booleans(), "snd_files": flags, "service_requests": st.booleans()},
        ),
    ),
    "set_network_config": st.tuples(
        st.just(()),
        st.fixed_dictionaries(
            {},
            optional={
                "socks": st.booleans() | tokens,
                "socks_mode": tokens,
                "host_mode": tokens,
                "required_host_mode": st.booleans(),
                "smp_proxy": tokens,
                "smp_proxy_fallback": tokens,
                "timeout_s": ids,
                "log": flags,
            },
        ),
    ),
    "exec_chat_sql": st.tuples(st.tuples(texts), st.just({})),
    "exec_agent_sql": st.tuples(st.tuples(texts), st.just({})),
    "create_my_address": st.tuples(st.tuples(ids), st.fixed_dictionaries({"pq_ratchet": flags})),
    "add_my_address_short_link": st.tuples(
        st.tuples(ids), st.fixed_dictionaries({"pq_ratchet": flags})
    ),
    "show_my_address": st.tuples(st.tuples(ids), st.just({})),
    "set_address_settings": st.tuples(
        st.tuples(ids, objects), st.fixed_dictionaries({"pq_ratchet": flags})
    ),
    "set_profile_address": st.tuples(st.tuples(ids, st.booleans()), st.just({})),
    "delete_my_address": st.tuples(st.tuples(ids), st.just({})),
    "accept_contact": st.tuples(st.tuples(ids), st.fixed_dictionaries({"incognito": flags})),
    "reject_contact": st.tuples(st.tuples(ids), st.fixed_dictionaries({"notify": flags})),
    "set_auto_accept_member_contacts": st.tuples(st.tuples(ids, st.booleans()), st.just({})),
    "set_auto_accept_group_invitations": st.tuples(st.tuples(ids, st.booleans()), st.just({})),
    "connect_plan": st.tuples(
        st.tuples(ids, tokens),
        st.fixed_dictionaries(
            {},
            optional={
                "resolve": st.sampled_from(["allGroups", "unknown", "never"]),
                "link_owner_sig": objects,
            },
        ),
    ),
    "prepare_contact": st.tuples(
        st.tuples(ids, full_links, objects),
        st.fixed_dictionaries({"short_link": short_links}, optional={"domain": tokens}),
    ),
    "prepare_group": st.tuples(
        st.tuples(ids, full_links, objects),
        st.fixed_dictionaries(
            {"short_link": short_links, "direct": flags}, optional={"domain": tokens}
        ),
    ),
    "connect_prepared_contact": st.tuples(
        st.tuples(ids), st.fixed_dictionaries({"incognito": flags, "message": messages})
    ),
    # owner_contact= (contact= owner=) is in no source the simulator follows: not generated
    "connect_prepared_group": st.tuples(
        st.tuples(ids), st.fixed_dictionaries({"incognito": flags, "message": messages})
    ),
    "add_contact": st.tuples(st.tuples(ids), st.fixed_dictionaries({"incognito": flags})),
    "connect": st.tuples(
        st.tuples(ids, full_links),
        st.fixed_dictionaries({"short_link": short_links, "incognito": flags}),
    ),
    "connect_contact_via_address": st.tuples(
        st.tuples(ids, ids), st.fixed_dictionaries({"incognito": flags})
    ),
    "send_messages": st.tuples(
        st.tuples(refs, st.lists(objects, min_size=1, max_size=2)),
        st.fixed_dictionaries(
            {},
            optional={
                "live": st.booleans(),
                "ttl": st.none() | ids | st.just("default"),
                "sign": st.booleans(),
            },
        ),
    ),
    "send_text": st.tuples(
        st.tuples(refs, texts),
        st.fixed_dictionaries(
            {},
            optional={
                "live": st.booleans(),
                "ttl": st.none() | ids | st.just("default"),
                "sign": st.booleans(),
            },
        ),
    ),
    "update_chat_item": st.tuples(
        st.tuples(refs, ids, objects), st.fixed_dictionaries({}, optional={"live": st.booleans()})
    ),
    "update_chat_item_text": st.tuples(
        st.tuples(refs, ids, texts), st.fixed_dictionaries({}, optional={"live": st.booleans()})
    ),
    "delete_chat_items": st.tuples(
        st.tuples(
            refs, id_lists, st.sampled_from(["broadcast", "internal", "internalMark", "history"])
        ),
        st.just({}),
    ),
    "get_chat": st.tuples(
        st.tuples(refs),
        st.one_of(
            st.fixed_dictionaries({"count": st.integers(0, 10**6)}),
            st.fixed_dictionaries({"after": ids, "count": st.integers(0, 100)}),
            st.fixed_dictionaries({"before": ids, "count": st.integers(0, 100)}),
            st.fixed_dictionaries({"around": ids, "count": st.integers(0, 100)}),
            st.fixed_dictionaries({"initial": st.integers(0, 100)}),
        ).flatmap(
            lambda page: st.fixed_dictionaries(
                {k: st.just(v) for k, v in page.items()},
                optional={"content": st.sampled_from(["text", "image", "link"]), "search": texts},
            )
        ),
    ),
    "get_chats": st.tuples(
        st.tuples(ids),
        st.one_of(
            st.just({}),
            st.fixed_dictionaries({"count": st.integers(0, 100)}),
            st.fixed_dictionaries({"after": times, "count": st.integers(0, 100)}),
            st.fixed_dictionaries({"before": times, "count": st.integers(0, 100)}),
        ).flatmap(
            lambda page: st.fixed_dictionaries(
                {k: st.just(v) for k, v in page.items()},
                optional={"pending_connections": flags, "query": objects},
            )
        ),
    ),
    "chat_items_read": st.tuples(st.tuples(refs, id_lists), st.just({})),
    "chat_read": st.tuples(st.tuples(refs), st.just({})),
    "set_custom_data": st.tuples(st.tuples(refs, st.none() | objects), st.just({})),
    "delete_chat": st.one_of(
        st.tuples(
            st.tuples(refs, st.sampled_from(["full", "entity"])),
            st.fixed_dictionaries({"notify": flags}),
        ),
        st.tuples(st.tuples(refs, st.just("messages")), st.just({})),
    ),
    "contact_info": st.tuples(st.tuples(ids), st.just({})),
    "group_info": st.tuples(st.tuples(ids), st.just({})),
    "list_contacts": st.tuples(st.tuples(ids), st.just({})),
    "list_groups": st.tuples(
        st.tuples(ids),
        st.fixed_dictionaries(
            {},
            optional={
                "contact_id": ids,
                "search": texts.filter(lambda t: not (t.startswith("@") and t[1:2].isdigit())),
            },
        ),
    ),
    "new_group": st.tuples(
        st.tuples(ids, objects), st.fixed_dictionaries({}, optional={"incognito": st.booleans()})
    ),
    "update_group_profile": st.tuples(st.tuples(ids, objects), st.just({})),
    "list_members": st.tuples(st.tuples(ids), st.just({})),
    "set_members_role": st.tuples(st.tuples(ids, id_lists, roles), st.just({})),
    "remove_members": st.tuples(
        st.tuples(ids, id_lists),
        st.fixed_dictionaries({}, optional={"with_messages": st.booleans()}),
    ),
    "leave_group": st.tuples(st.tuples(ids), st.just({})),
    "join_group": st.tuples(st.tuples(ids), st.just({})),
    "add_member": st.tuples(st.tuples(ids, ids, roles), st.just({})),
    "create_group_link": st.tuples(
        st.tuples(ids), st.fixed_dictionaries({}, optional={"role": roles})
    ),
    "set_group_link_role": st.tuples(st.tuples(ids, roles), st.just({})),
    "delete_group_link": st.tuples(st.tuples(ids), st.just({})),
    "get_group_link": st.tuples(st.tuples(ids), st.just({})),
    "send_service_request": st.tuples(
        st.tuples(ids, tokens, objects),
        st.fixed_dictionaries(
            {},
            optional={
                "timeout_s": st.floats(min_value=0.001, max_value=180, allow_nan=False),
                "sign_key": tokens,
            },
        ),
    ),
    "send_service_response": st.tuples(st.tuples(ids, tokens, objects), st.just({})),
}

#: Names in the builders' module that build no command.
NOT_COMMANDS = {"composed_text", "mention", "parse_chat_ref", "quote_name"}


def _builders() -> dict[str, Callable[..., str]]:
    return {
        name: getattr(c, name)
        for name in c.__all__
        if inspect.isfunction(getattr(c, name)) and name not in NOT_COMMANDS
    }


def test_every_builder_has_arguments_to_try() -> None:
    assert set(ARGUMENTS) == set(_builders())


@given(st.sampled_from(sorted(ARGUMENTS)).flatmap(lambda n: st.tuples(st.just(n), ARGUMENTS[n])))
def test_every_command_a_builder_makes_is_parsed_by_the_spec_profile(
    case: tuple[str, tuple[tuple[Any, ...], dict[str, Any]]],
) -> None:
    name, (args, kwargs) = case
    command = _builders()[name](*args, **kwargs)
    parsed = GRAMMAR.parse(command)
    assert not isinstance(parsed, str), (name, command, parsed)
