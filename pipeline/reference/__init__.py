"""The reference implementation as judge: transformers (pinned, the ``reference`` extra) builds a config on the
meta device, and its parameters are the census the weight inventories must equal (:mod:`.census`); from a few
such builds and one traced forward it also drafts a new family's op profile (:mod:`.draft`).

The only package that imports torch and transformers; nothing below it does, and ``modelspec check`` never loads
it. It imports :mod:`pipeline.pricing` (the judge's comparison, the shared key table) only.
"""
