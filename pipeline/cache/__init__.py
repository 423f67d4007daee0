"""Every answer modelspec remembers between runs: file stamps, each spec's verdict record, the catalogue's names,
the checked op profiles, catalogue snapshots, a whole check's answer and what decides each artifact.

A cache wraps the layers below (:mod:`pipeline.check`, :mod:`pipeline.pricing`, :mod:`pipeline.spec`) and is
handed to them as a store or a loader; none of them imports it. ``docs/cache.md`` tells what each answers.
"""
