"""modelspec: a catalogue of model specs and the pipeline that keeps it right.

The package is imported by every command, so it holds only the version; the
library lives in its modules (:mod:`pipeline.spec.model`, :mod:`pipeline.pricing.stack`,
...), each imported where it is needed.
"""

__version__ = "0.1.0"
