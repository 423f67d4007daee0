"""Write the model types transformers 5.24.0 implements, and their classes, to pipeline/importer/transformers_types.txt.

The importer tells a model type transformers implements natively (a profile can be drafted for it) from one only
a hub repository's own code implements, and a config's ``architectures`` class of another model type, from that
file, since the core never imports transformers. The ``reference``-marked test holds the file to the installed
transformers. Needs the reference: ``pip install torch==2.13.0 transformers==5.24.0``.

Usage: ``.venv/bin/python bench/transformers_types.py [--check]``
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
OUT = ROOT / "pipeline" / "importer" / "transformers_types.txt"

from transformers_types import transformers_types_text  # noqa: E402  pylint: disable=wrong-import-position


def main() -> None:
    text = transformers_types_text()
    if "--check" in sys.argv[1:]:
        raise SystemExit(0 if OUT.read_text(encoding="utf-8") == text else f"{OUT} is stale; rerun without --check")
    OUT.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
