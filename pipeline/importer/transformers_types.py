"""What transformers 5.24.0 implements, as shipped data: its model types and the model classes of each.

The importer says of a model type no op profile prices whether transformers implements it natively (so a profile
can be drafted from the reference) or only a hub repository's own code does, and refuses a config whose
``architectures`` names a class of another model type than its ``model_type``. The core never imports
transformers, so both answers come from ``transformers_types.txt`` beside this module: one line per model type of
transformers' ``CONFIG_MAPPING``, then the classes its Auto mappings give that type, written by
``bench/transformers_types.py`` and held to the installed transformers by a ``reference``-marked test.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Dict, List, Mapping, Tuple

_FILE = Path(__file__).with_name("transformers_types.txt")


@dataclass(frozen=True)
class TransformersTypes:
    """The model types of one transformers release and the classes of each.

    Attributes:
        version: The release, as the file's header names it (``"5.24.0"``).
        classes: Each model type to the classes its Auto mappings give it (base model, causal LM, ...).
    """

    version: str
    classes: Mapping[str, Tuple[str, ...]]

    def implements(self, model_type: object) -> bool:
        """Whether transformers builds *model_type* with its own code (a ``CONFIG_MAPPING`` model type)."""
        return isinstance(model_type, str) and model_type in self.classes

    def types_of(self, class_name: object) -> Tuple[str, ...]:
        """The model types whose Auto mappings give the class *class_name* (``()`` for a class transformers lacks)."""
        return self._owners.get(class_name, ()) if isinstance(class_name, str) else ()

    @functools.cached_property
    def _owners(self) -> Mapping[str, Tuple[str, ...]]:
        owners: Dict[str, List[str]] = {}
        for model_type, names in self.classes.items():
            for name in names:
                owners.setdefault(name, []).append(model_type)
        return {name: tuple(types) for name, types in owners.items()}


def parse(text: str) -> TransformersTypes:
    """The file's text as :class:`TransformersTypes` (its header: ``# transformers VERSION: ...``)."""
    header, *lines = text.splitlines()
    version = header.removeprefix("# transformers ").split(":", 1)[0]
    classes = {fields[0]: tuple(fields[1:]) for fields in (line.split() for line in lines) if fields}
    return TransformersTypes(version, MappingProxyType(classes))


@functools.lru_cache(maxsize=1)
def transformers_types() -> TransformersTypes:
    """The shipped file's model types and classes (read once)."""
    return parse(_FILE.read_text(encoding="utf-8"))
