"""Website discovery: the SimpleX addresses a website publishes, and what they declare.

Following the spec's overview ("Agent protocols over SimpleX"): an agent reads the addresses
from a website (llms.txt, ``/.well-known/simplex.json``, link relations, and the A2A Agent
Card), then retrieves each address's link data without connecting and reads its declarations,
which take precedence over the website's values (DECL-PREC-1)::

    from simplex_protocols.discovery import discover_website, plan_address

    site = await discover_website("https://acme.example")
    for address in site.agent_contacts("mcp"):
        plan = await plan_address(api, user_id, address.address, website=address)
        print(plan.display_name, dict(plan.protocols), plan.serves.value)

Fetching is bounded (:class:`DiscoveryLimits`): HTTPS only (plain HTTP for loopback hosts),
bounded redirects, size caps, timeouts, no cookies. The document readers
(:func:`read_llms_txt`, :func:`read_simplex_json`, :func:`read_link_relations`,
:func:`read_agent_card`) and :func:`read_plan` do no I/O. See ``docs/discovery.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simplex_protocols._exports import lazy_exports, publish
from simplex_protocols.bindings._a2a_wire import A2A_BINDING_URI as A2A_BINDING_URI

from ._documents import merge_addresses as merge_addresses
from ._documents import read_agent_card as read_agent_card
from ._documents import read_link_relations as read_link_relations
from ._documents import read_llms_txt as read_llms_txt
from ._documents import read_simplex_json as read_simplex_json
from ._model import AddressSource as AddressSource
from ._model import DiscoveryLimits as DiscoveryLimits
from ._model import DiscoveryProblem as DiscoveryProblem
from ._model import DocumentReport as DocumentReport
from ._model import DocumentStatus as DocumentStatus
from ._model import WebsiteAddress as WebsiteAddress
from ._model import WebsiteDiscovery as WebsiteDiscovery
from ._plan import AddressPlan as AddressPlan
from ._plan import plan_address as plan_address
from ._plan import read_plan as read_plan

# The fetcher (httpx) loads with discover_website's first use: a caller that only reads link
# data (simplex-call @name.simplex ...) does not load an HTTP client.
if TYPE_CHECKING:
    from ._website import discover_website as discover_website

__all__ = [
    "A2A_BINDING_URI",
    "AddressPlan",
    "AddressSource",
    "DiscoveryLimits",
    "DiscoveryProblem",
    "DocumentReport",
    "DocumentStatus",
    "WebsiteAddress",
    "WebsiteDiscovery",
    "discover_website",
    "merge_addresses",
    "plan_address",
    "read_agent_card",
    "read_link_relations",
    "read_llms_txt",
    "read_plan",
    "read_simplex_json",
]

publish(globals(), __all__)

__getattr__ = lazy_exports(globals(), {"discover_website": "._website"})
