"""The repository as a whole: finding a spec by name, the ``list`` and ``show`` views, the resolved artifacts and
``regen``, the catalogue diff, the static site, git, and writing files atomically.

It imports the cache and everything below it; only :mod:`pipeline.reporters` and :mod:`pipeline.commands` are above.
"""
