"""Every priced config class's keys, read from the installed transformers (the reference; imports it).

A helper of the ``reference``-marked tests and of ``bench/reference_keys.py``, which writes its answer to
``tests/data/config_keys.json`` for the torch-free test. For a model type: ``keys``, the parameters of its config
class's ``__init__`` (the dataclass fields) that ``PreTrainedConfig.__init__`` does not take; ``aliases``, its
``attribute_map``'s keys; and the same for the ``text_config`` and ``vision_config`` classes it nests (a sub-config
named by ``AutoConfig`` and a model type is that model type's class). ``PreTrainedConfig`` itself is listed under
its own name, with the keys ``to_dict`` writes beside its fields and the generation settings its ``__post_init__``
pops (``popped``).
"""

from __future__ import annotations

import inspect
from typing import Any, Dict, Iterable, List

from transformers import GenerationConfig, PreTrainedConfig
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

#: Keys ``PreTrainedConfig.to_dict`` writes that are no ``__init__`` parameter: set in ``__post_init__`` or by
#: ``to_dict`` itself (transformers 5.24.0 configuration_utils.py PreTrainedConfig.__post_init__, to_dict).
WRITTEN = ("_name_or_path", "model_type", "output_attentions", "torch_dtype")


def _parameters(cls: type) -> List[str]:
    return [name for name in inspect.signature(cls.__init__).parameters if name not in ("self", "kwargs")]


def _generic() -> List[str]:
    return sorted(set(_parameters(PreTrainedConfig)) | set(WRITTEN))


def _class_keys(cls: type) -> Dict[str, Any]:
    """A class's own keys, aliases, and the keys its default instance's ``to_dict`` writes beside them."""
    generic = set(_generic())
    own = set(_parameters(cls)) - generic - {"text_config", "vision_config"}
    written = set(cls().to_dict()) - own - generic - set(cls.attribute_map) - {"text_config", "vision_config"}
    return {"class": cls.__name__, "keys": sorted(own), "aliases": sorted(cls.attribute_map),
            "written": sorted(written)}


def _sub_class(spec: Any) -> type:
    cls = getattr(spec, "config_class", spec)
    model_type = getattr(spec, "model_type", None)
    return CONFIG_MAPPING[model_type] if cls.__name__ == "AutoConfig" else cls


def reference_keys(model_types: Iterable[str]) -> Dict[str, Any]:
    """``{model_type: {class, keys, aliases, text_config?, vision_config?}}`` and ``PreTrainedConfig``'s keys."""
    popped = sorted(set(GenerationConfig._get_default_generation_params()) - {"use_cache"})  # pylint: disable=protected-access
    found: Dict[str, Any] = {"PreTrainedConfig": {"class": "PreTrainedConfig", "keys": _generic(), "aliases": [],
                                                  "written": [], "popped": popped}}
    for model_type in model_types:
        if model_type not in CONFIG_MAPPING:
            continue  # kimi_k2: a hub model type transformers does not implement (read as deepseek_v3)
        cls = CONFIG_MAPPING[model_type]
        entry = _class_keys(cls)
        for nested in ("text_config", "vision_config"):
            spec = cls.sub_configs_defaults.get(nested)
            if spec is not None:
                entry[nested] = _class_keys(_sub_class(spec))
        found[model_type] = entry
    return found
