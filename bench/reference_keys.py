"""Write every priced config class's keys, as transformers 5.24.0 defines them, to tests/data/config_keys.json.

For each model type an op profile with an ``import`` section lists (and transformers implements): the parameters
of its config class's ``__init__`` (a dataclass's fields), its ``attribute_map`` aliases, and the same for the
``text_config`` and ``vision_config`` classes it nests; ``PreTrainedConfig`` apart, under ``"PreTrainedConfig"``.
The torch-free test (tests/test_config_keys.py) holds every family's import section to this file; the
``reference``-marked test holds this file to the installed transformers. Needs the reference: ``pip install
torch==2.13.0 transformers==5.24.0``.

Usage: ``.venv/bin/python bench/reference_keys.py [--check]``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
OUT = ROOT / "tests" / "data" / "config_keys.json"

from config_keys import reference_keys  # noqa: E402  pylint: disable=wrong-import-position


def main() -> None:
    from pipeline.importer.config_json import family_names  # pylint: disable=import-outside-toplevel
    from pipeline.pricing.op_profiles import load_op_profiles  # pylint: disable=import-outside-toplevel

    text = json.dumps(reference_keys(family_names(load_op_profiles(ROOT / "op_profiles"))), indent=1,
                      sort_keys=True) + "\n"
    if "--check" in sys.argv[1:]:
        raise SystemExit(0 if OUT.read_text(encoding="utf-8") == text else f"{OUT} is stale; rerun without --check")
    OUT.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
