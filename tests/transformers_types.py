"""The model types transformers implements and the model classes of each, read from the installed transformers.

A helper of the ``reference``-marked test and of ``bench/transformers_types.py``, which writes its answer to
``pipeline/importer/transformers_types.txt`` for the importer (which never imports transformers): one line per
model type of ``CONFIG_MAPPING``, sorted, then the classes the Auto mappings a checkpoint's ``architectures``
names give it (base model, causal LM, seq-to-seq LM, image-text-to-text, multimodal LM, masked LM, pretraining),
sorted, separated by spaces.
"""

from __future__ import annotations

from typing import Dict, Set

import transformers
from transformers.models.auto import modeling_auto
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

#: The Auto mappings whose classes a language model's ``architectures`` names.
MAPPINGS = ("MODEL_MAPPING_NAMES", "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
            "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", "MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES",
            "MODEL_FOR_MASKED_LM_MAPPING_NAMES", "MODEL_FOR_PRETRAINING_MAPPING_NAMES")


def transformers_types_text() -> str:
    """The file's text: a header naming the transformers version, then ``model_type Class Class ...`` lines."""
    classes: Dict[str, Set[str]] = {name: set() for name in CONFIG_MAPPING.keys()}
    for mapping in MAPPINGS:
        for model_type, names in getattr(modeling_auto, mapping).items():
            classes[model_type].update((names,) if isinstance(names, str) else names)
    lines = [" ".join([model_type, *sorted(classes[model_type])]) for model_type in sorted(classes)]
    return (f"# transformers {transformers.__version__}: each model type, then the classes of its Auto mappings "
            "(written by bench/transformers_types.py)\n" + "\n".join(lines) + "\n")
