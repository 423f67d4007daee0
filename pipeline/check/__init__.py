"""The passes over spec files: finding them in a repository, running the five passes, the configuration and the
ignores that shape a report, and the fixes ``--fix`` makes.

It imports :mod:`pipeline.importer.config_json`, :mod:`pipeline.pricing` and :mod:`pipeline.spec`. It remembers nothing between
runs: :mod:`pipeline.cache` wraps it from above.
"""
