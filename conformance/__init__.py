"""The conformance suite: simplex-conformance."""
