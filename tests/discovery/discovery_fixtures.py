"""Fixture addresses and documents for the discovery tests."""

from __future__ import annotations

import json

from simplex_protocols.links import LinkKind, format_short_link

CONTACT = format_short_link(LinkKind.CONTACT, "smp12.simplex.im", bytes(range(32)))
CONTACT2 = format_short_link(LinkKind.CONTACT, "smp8.simplex.im", bytes(range(1, 33)))
CHANNEL = format_short_link(LinkKind.CHANNEL, "smp12.simplex.im", bytes(range(2, 34)))
GROUP = format_short_link(LinkKind.GROUP, "smp12.simplex.im", bytes(range(3, 35)))
INVITATION = format_short_link(
    LinkKind.INVITATION, "smp12.simplex.im", bytes(range(4, 36)), link_id=bytes(range(24))
)

CLEAN_LLMS = f"""# Acme

> Anvils and more.

## Communications

- [Acme news]({CHANNEL}): SimpleX updates for people and agents, weekly. Product news.
- [Acme customers]({GROUP}): SimpleX group for people. Questions and tips.
- [Ask Acme]({CONTACT}): SimpleX business contact for agents, MCP, A2A. Orders and availability.
- [Acme support](mailto:support@acme.example): Email contact for people.
"""

MESSY_LLMS = f"""\ufeff# Acme\r
\r
## Docs\r
- [Guide](https://acme.example/guide): not an address\r
\r
## communications ##\r
\r
Some words before the list.\r
\r
* [Ask Acme]({CONTACT}): simplex CONTACT for people and agents, mcp. Orders.\r
- [Broken](https://acme.example): SimpleX contact for agents. Not a SimpleX link.\r
- [Wrong kind]({CHANNEL}): SimpleX contact for agents. A channel link as a contact.\r
- [No audience]({CONTACT2}): SimpleX contact for robots. Bad audience.\r
  - [Nested]({CONTACT2}): SimpleX contact for agents. Nested.\r
```\r
- [In code]({CONTACT2}): SimpleX contact for agents. Hidden in a code block.\r
```\r
- [Matrix room](https://matrix.to/#/#acme:matrix.org): Matrix group for people. Chat.\r
\r
## Other\r
- [After]({CONTACT2}): SimpleX contact for agents. After the section.\r
"""

WELL_KNOWN = json.dumps(
    {
        "channels": [{"link": CHANNEL, "title": "Acme news", "changeFrequency": "Daily"}],
        "groups": [GROUP],
        "contacts": [
            {
                "link": CONTACT,
                "title": "Ask Acme (well-known)",
                "serves": ["agent", "human"],
                "protocols": ["MCP"],
                "business": True,
                "unknown": {"kept": False},
            },
            "@acme.simplex",
            {"link": CHANNEL},
            {"link": INVITATION},
            {"link": "https://acme.example/not-simplex"},
            42,
            {"title": "no link"},
        ],
        "extra": [],
    }
)


def agent_card(url: str = CONTACT, version: str = "1.0") -> str:
    return json.dumps(
        {
            "name": "Acme agent",
            "description": "Orders and quotes",
            "version": "1.0.0",
            "supportedInterfaces": [
                {
                    "url": "https://agent.acme.example/a2a",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                },
                {
                    "url": url,
                    "protocolBinding": "https://simplex.chat/protocol/a2a/v1",
                    "protocolVersion": version,
                },
            ],
            "capabilities": {"streaming": True},
            "skills": [],
        }
    )


HOME = f"""<!doctype html>
<html><head>
<title>Acme</title>
<link rel="stylesheet" href="/style.css">
<link rel="icon" href="{CONTACT2}">
<link rel="simplex-contact me" href="{CONTACT}">
<link rel="alternate" href="{CHANNEL}">
<link rel="me" href="{INVITATION}">
<link rel="author" href="https://acme.example/about">
</head><body><a href="{CONTACT2}">not a link relation</a></body></html>
"""
