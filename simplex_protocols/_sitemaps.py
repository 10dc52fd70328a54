"""The Sitemaps protocol's ``changefreq`` values, which the spec uses twice (no I/O).

An llms.txt entry gives its update frequency in these words (LLMS-NOTES-4), and a channel's
public group record its ``changeFrequency`` (DECL-AUD-3); the precedence rule compares the two
(DECL-PREC-1). One class serves both, defined here, below the two codecs that read them:
:mod:`simplex_protocols.llmstxt` and :mod:`simplex_protocols.declarations` export it.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ChangeFrequency"]


class ChangeFrequency(StrEnum):
    """The ``changefreq`` values of the Sitemaps protocol.

    An llms.txt entry's update frequency (LLMS-NOTES-4) and a channel's ``changeFrequency``
    (DECL-AUD-3) take one of these seven words.
    """

    ALWAYS = "always"
    HOURLY = "hourly"
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    YEARLY = "yearly"
    NEVER = "never"


# Reprs, pickles and docs name the public path, as for every export; declarations re-exports
# the same class, so it has one home: the codec of the spec's first section that uses it.
ChangeFrequency.__module__ = "simplex_protocols.llmstxt"
