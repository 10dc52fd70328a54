"""The web addresses of the project's documents, for what the console scripts tell a user to read.

The wheel carries the code and the spec's data, not the repository's ``docs/`` folder or its
READMEs, so a path such as ``docs/sim.md`` in a ``--help`` text or at the end of a demo names
nothing on the machine of someone who installed the package. The tools give the document's
address in the project's repository instead, built here from one base, so that every tool and
the package's metadata (``[project.urls]`` in pyproject.toml, which a test compares with
:data:`REPOSITORY_URL`) point at the same place.
"""

from __future__ import annotations

from typing import Final

__all__ = ["REPOSITORY_URL", "doc_url"]

REPOSITORY_URL: Final = "https://github.com/simplex-protocols/simplex-protocols"
"""The project's source repository."""

# The default branch, not a release tag: the tools of any version point at the newest text, and
# an address that names no version never has to be bumped with one.
_FILES_URL: Final = f"{REPOSITORY_URL}/blob/main/"


def doc_url(path: str) -> str:
    """The web address of a document of the repository.

    Args:
        path: the document's path from the repository's root, with ``/`` between the parts
            (``"docs/sim.md"``, ``"conformance/README.md"``); a ``#fragment`` may follow.

    Returns:
        The address of the document on the repository's default branch.
    """
    return _FILES_URL + path
