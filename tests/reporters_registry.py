"""Each report format's reporter with its default options, for the tests that render every format."""

from pipeline.reporters import FORMATS, reporter

#: Format name to its reporter (:func:`pipeline.reporters.reporter`), in the registry's order.
REPORTERS = {fmt: reporter(fmt) for fmt in FORMATS}
