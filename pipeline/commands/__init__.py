"""The subcommands of ``modelspec``, one module each, imported only when run (see :mod:`pipeline.cli`)."""
