"""A Hugging Face ``config.json`` turned into a spec: the importer's mapping, read from each family's data.

It imports :mod:`pipeline.pricing` (the families, the count it writes) and :mod:`pipeline.spec`; nothing above.
"""
