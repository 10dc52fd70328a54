"""``python -m simplex_protocols.mcp_server``: ``simplex-mcp`` without its console script.

A host that starts the server as a child process (``serve NAME --stdio``) may name the Python
interpreter rather than a script on its ``PATH``.
"""

import sys

from .cli import main

sys.exit(main())
