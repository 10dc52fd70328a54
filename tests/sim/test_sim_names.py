"""The simulated core checks display names with the core's rules (``simplex_protocols.coretext``):
the names it accepts, and the valid name ``invalidDisplayName`` suggests for the others."""

from __future__ import annotations

import pytest

from simplex_protocols._clock import ManualClock
from simplex_protocols._wire import dumps
from simplex_protocols.coretext import is_valid_display_name, mk_valid_name
from simplex_protocols.sim import SimNetwork

NAMES = [
    ("Émile Zola", True),
    ("🙂 smile", True),
    ("bob!", True),
    ("e\u0301te", True),  # a combining mark after a letter
    ("alice  bob", False),  # two spaces
    ("J.Doe", False),
    ("'quoted'", False),
    ("\u0301alice", False),  # a combining mark cannot start a name
    (" alice", False),
    ("a" * 51, False),
]


@pytest.mark.parametrize(("name", "valid"), NAMES, ids=[repr(n[:12]) for n, _ in NAMES])
def test_profile_names_follow_the_cores_rules(name: str, valid: bool) -> None:
    assert is_valid_display_name(name) is valid
    user = SimNetwork(seed=1, clock=ManualClock()).add_user("someone")
    resp = user.command(f"/_profile {user.user_id} {dumps({'displayName': name, 'fullName': ''})}")
    if valid:
        assert resp["type"] == "userProfileUpdated"
        assert resp["toProfile"]["displayName"] == name
    else:
        assert resp["type"] == "chatCmdError"
        error = resp["chatError"]["errorType"]
        assert error == {
            "type": "invalidDisplayName",
            "displayName": name,
            "validName": mk_valid_name(name),
        }


def test_a_new_user_with_an_invalid_name_is_refused_with_the_valid_one() -> None:
    network = SimNetwork(seed=1, clock=ManualClock())
    with pytest.raises(ValueError, match="invalidDisplayName"):
        network.add_user("doe", display_name="J.Doe")
    assert network.add_user("doe", display_name=mk_valid_name("J.Doe")).display_name == "JDoe"
