"""Write the default configs of every priced model type, as transformers 5.24.0 saves them, to tests/data/defaults/.

For each model type an op profile with an ``import`` section lists (and transformers implements), two files:
``<model_type>.saved.json`` (``AutoConfig.for_model(t).save_pretrained()``: the diff against PreTrainedConfig's
defaults) and ``<model_type>.full.json`` (``to_json_string(use_diff=False)``: every attribute ``to_dict`` writes).
The tests import them with no torch (tests/test_reference_defaults.py). Needs the reference: ``pip install
torch==2.13.0 transformers==5.24.0``.

Usage: ``.venv/bin/python bench/reference_defaults.py``
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "defaults"


def main() -> None:
    from transformers import AutoConfig  # pylint: disable=import-outside-toplevel
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING  # pylint: disable=import-outside-toplevel

    from pipeline.importer.config_json import family_names  # pylint: disable=import-outside-toplevel
    from pipeline.pricing.op_profiles import load_op_profiles  # pylint: disable=import-outside-toplevel

    OUT.mkdir(parents=True, exist_ok=True)
    for model_type in family_names(load_op_profiles(ROOT / "op_profiles")):
        if model_type not in CONFIG_MAPPING:
            print(f"{model_type}: not a transformers model type, skipped")
            continue
        config = AutoConfig.for_model(model_type)
        with tempfile.TemporaryDirectory() as folder:
            config.save_pretrained(folder)
            saved = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
        full = json.loads(config.to_json_string(use_diff=False))
        for form, data in (("saved", saved), ("full", full)):
            (OUT / f"{model_type}.{form}.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n",
                                                          encoding="utf-8")
        print(f"{model_type}: written")


if __name__ == "__main__":
    main()
