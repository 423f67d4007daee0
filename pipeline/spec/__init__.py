"""The spec as a file and as a value: strict YAML, the model IR, the schema pass, the round trip, the canonical
layout, problems and escaping.

The lowest layer. It imports nothing else of modelspec (only :mod:`pipeline`'s version), so every layer above can
use it, and a tool that only reads specs needs nothing more.
"""
