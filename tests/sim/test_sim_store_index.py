"""The simulated core's indexes over its rows (unread items, members by group), and storing
many received messages at once for benchmarks (``seed_received``)."""

from __future__ import annotations

import bisect
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simplex_protocols.sim._store import Database, MemberRow, SortedRun
from simplex_protocols.sim.testing import World, seed_received

# ---------------------------------------------------------------------------- SortedRun

#: One change to a run: add a key, or remove one (the oldest, the newest, or any).
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 60)),
        st.tuples(st.sampled_from(["remove", "remove-first", "remove-last"]), st.integers(0, 60)),
    ),
    max_size=200,
)


@given(_STEPS)
def test_a_sorted_run_keeps_what_a_sorted_list_keeps(steps: list[tuple[str, int]]) -> None:
    run: SortedRun[int] = SortedRun()
    model: list[int] = []
    for op, key in steps:
        if op == "add":
            if key not in model:  # the index never holds a key twice
                run.add(key)
                bisect.insort(model, key)
            continue
        if op == "remove-first" and model:
            key = model[0]
        elif op == "remove-last" and model:
            key = model[-1]
        assert run.remove(key) is (key in model)
        if key in model:
            model.remove(key)
        assert list(run) == model
        assert len(run) == len(model) and bool(run) is bool(model)
        if model:
            assert run[0] == model[0] and run[len(model) - 1] == model[-1]
        for probe in (0, key, 30, 61):
            assert run.count_after(probe) == len(model) - bisect.bisect_right(model, probe)
    with pytest.raises(IndexError):
        run[len(model)]


def test_reading_the_oldest_of_many_keys_drops_them_from_the_run() -> None:
    run: SortedRun[int] = SortedRun()
    for key in range(1_000):
        run.add(key)
    for key in range(900):
        assert run.remove(key)
    assert list(run) == list(range(900, 1_000))
    assert run[0] == 900
    # the keys read are let go once they are half of the list, not kept for ever
    assert len(run._keys) < 200
    assert not run.remove(5)


# ---------------------------------------------------------------------------- members


def _member(member_id: int, group_id: int) -> MemberRow:
    return MemberRow(
        group_member_id=member_id,
        group_id=group_id,
        user_id=1,
        index_in_group=0,
        member_id=f"m{member_id}",
        role="member",
        category="invitee",
        status="connected",
        invited_by={"type": "user"},
        local_display_name=f"m{member_id}",
        profile_id=1,
        member_contact_profile_id=1,
        created_at="",
        updated_at="",
    )


def _by_group(db: Database, group_id: int) -> list[int]:
    return [m.group_member_id for m in db.members.values() if m.group_id == group_id]


def test_group_members_follow_members_added_one_by_one_and_deleted() -> None:
    db = Database()
    for n in range(30):
        member_id = db.next_id("members")
        db.members[member_id] = _member(member_id, n % 3)
        assert [m.group_member_id for m in db.group_members(n % 3)] == _by_group(db, n % 3)
    del db.members[4]
    member_id = db.next_id("members")
    db.members[member_id] = _member(member_id, 1)
    for group_id in range(3):
        assert [m.group_member_id for m in db.group_members(group_id)] == _by_group(db, group_id)
    # a row added without its ID from the counter (as a loaded file has them) is found too
    db.members[99] = _member(99, 2)
    db.counters["members"] = 99
    assert [m.group_member_id for m in db.group_members(2)] == _by_group(db, 2)


# ---------------------------------------------------------------------------- seeding


def _unread(resp: dict[str, Any]) -> int:
    return int(resp["chat"]["chatStats"]["unreadCount"])


@pytest.mark.anyio
async def test_seeded_messages_are_unread_received_items_without_events() -> None:
    async with World(seed=3) as world:
        alice, bob = await world.users("alice", "bob")
        group = await world.group(alice, [bob])
        contact, _ = await world.connect(bob, alice)
        chat = f"#{group['bob']}"
        events = len(bob.events)
        user = world.network.user("bob")
        ids = seed_received(user, chat, (f"offer {n}" for n in range(250)))
        assert len(ids) == 250 and ids == sorted(ids)
        assert len(bob.events) == events
        first = await bob.cmd(f"/_get chat {chat} initial=1")
        assert _unread(first) == 250
        assert first["chat"]["chatStats"]["minUnreadItemId"] == ids[0]
        page = await bob.cmd(f"/_get chat {chat} after={ids[99]} count=100")
        items = page["chat"]["chatItems"]
        assert [i["meta"]["itemId"] for i in items] == ids[100:200]
        assert {i["chatDir"]["type"] for i in items} == {"groupRcv"}
        assert {i["chatDir"]["groupMember"]["memberProfile"]["displayName"] for i in items} == {
            "alice"
        }
        assert {i["meta"]["itemStatus"]["type"] for i in items} == {"rcvNew"}
        assert items[0]["content"] == {
            "type": "rcvMsgContent",
            "msgContent": {"type": "text", "text": "offer 100"},
        }
        assert all(i["meta"]["itemSharedMsgId"] for i in items)
        await bob.cmd(f"/_read chat items {chat} {','.join(map(str, ids[:100]))}")
        after = await bob.cmd(f"/_get chat {chat} initial=1")
        assert _unread(after) == 150
        assert after["chat"]["chatStats"]["minUnreadItemId"] == ids[100]
        direct = f"@{contact['contactId']}"
        seed_received(user, direct, ["hi"])
        last = await bob.cmd(f"/_get chat {direct} count=1")
        assert last["chat"]["chatItems"][0]["chatDir"] == {"type": "directRcv"}
        with pytest.raises(ValueError, match="no member 12345 "):
            seed_received(user, chat, ["x"], member=12345)
