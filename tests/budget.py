"""The example budget of the property-based (Hypothesis) tests: fixed in CI, larger on demand.

Every ``@settings(max_examples=...)`` in the suite states its CI budget
through :func:`examples`, chosen so that all of them together run in well
under two minutes. ``MODELSPEC_FUZZ=<factor>`` multiplies every budget for a
longer run (``python bench/fuzz.py`` sets it, e.g. to 50), with a fresh random
seed each time unless ``--hypothesis-seed`` is given.
"""

from __future__ import annotations

import os

#: How many times its CI budget each property test runs (``MODELSPEC_FUZZ``, default 1).
FACTOR = max(1, int(os.environ.get("MODELSPEC_FUZZ", "1") or "1"))


def examples(budget: int) -> int:
    """The number of examples for a test whose CI budget is *budget*."""
    return budget * FACTOR
