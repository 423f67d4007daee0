"""The round-trip pass: what a file states survives ``to_dict`` -> YAML -> ``from_dict``.

Two promises are checked. The IR's: serialising a parsed spec and parsing it
back gives the same spec, so a tool that rewrites specs (``fmt``, ``import``,
``regen``) cannot change one. The file's: everything it states is kept, and
what the IR would drop is said out loud instead of vanishing silently: a
``null`` (the same as leaving the key out), a ``torch.`` prefix on the dtype,
a default written out (``mtp: false``), a ``layer_types`` list next to the
``layers`` that override it. A difference that is none of these is an error:
the file states something the IR lost.

The IR's promise is checked without a dump and a parse for nearly every
spec: ``load_bytes(dump(x)) == x`` holds exactly when every key and scalar of
*x* survives on its own (:func:`~pipeline.spec.yaml_source.survives_dump`, whose
per-value answers are cached across a catalogue), and then the spec is built
back from ``to_dict()`` itself. A value that is not known to survive (an odd
text, a float seen for the first time is dumped and read back once) sends the
whole spec through the real dump and parse, so the findings are the same.
And when ``to_dict()`` is, type for type, the very mapping the file states
(:func:`_same`: a file written as the IR writes it, what ``fmt`` and
``import`` make), the spec built back from it is the spec built from the file:
it is not built a second time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Iterator, List, Tuple

from pipeline.spec.model import ModelSpec, ModelSpecError
from pipeline.spec.problems import FieldPath, Severity, dotted
from pipeline.spec.yaml_source import dump, load_bytes, survives_dump

CODES: Dict[str, str] = {
    "roundtrip.null": "A key is stated as null, which is the same as leaving it out.",
    "roundtrip.torch-prefix": "torch_dtype carries a torch. prefix, which the spec drops.",
    "roundtrip.default": "A key states its default value, which the spec drops.",
    "roundtrip.layer-types-ignored": "layer_types is stated next to layers, which override it.",
    "roundtrip.lost": "A value the file states does not survive parsing and serialising.",
    "roundtrip.unstable": "The spec serialised and parsed back is not the same spec.",
}

# Keys whose default the IR drops when serialising: (field path suffix, default value).
_DEFAULTS = {("mtp",): False}

Finding = Tuple[FieldPath, str, Severity, str]


def roundtrip_findings(data: Mapping[str, Any], spec: ModelSpec) -> List[Finding]:
    """Compare the file's mapping *data* with *spec* serialised and parsed back.

    Args:
        data: The mapping the file states.
        spec: The spec parsed from it.

    Returns:
        ``(path, code, severity, message)`` for each difference, in document order.
    """
    written = spec.to_dict()
    findings = list(_differences(data, written, ()))
    if "layers" in data and data.get("layer_types") is not None:
        findings.append((("layer_types",), "roundtrip.layer-types-ignored", Severity.WARNING,
                         "layer_types is ignored because layers states the stack; remove layer_types"))
    if not _stable(data, written, spec):
        findings.append(((), "roundtrip.unstable", Severity.ERROR,
                         "the spec serialised and parsed back differs from the spec; this is a modelspec bug, "
                         "please report it with the file"))
    return findings


def _stable(data: Mapping[str, Any], written: Dict[str, Any], spec: ModelSpec) -> bool:
    """Whether *spec*, serialised (*written*, its ``to_dict()``), dumped as YAML and parsed back, is *spec*.

    When the YAML is known to keep *written* as it is
    (:func:`~pipeline.spec.yaml_source.survives_dump`, which costs a walk, not a
    dump and a parse), the spec is built back from *written* itself; and
    when *written* is also :func:`_same` as *data*, the file's own mapping that
    *spec* was built from, building it again would give *spec*
    (:meth:`~pipeline.spec.model.ModelSpec.from_dict` reads only values and their
    types), so it is not built.
    """
    if not survives_dump(written):
        written = load_bytes(dump(written).encode("utf-8"), "<round-trip>").data
    elif _same(written, data):
        return True
    try:
        return ModelSpec.from_dict(written, strict=False) == spec
    except ModelSpecError:
        return False


def _same(left: Any, right: Any) -> bool:
    """Whether *left* and *right* are equal, type for type, all the way down: mappings with the same text keys,
    lists of the same length and order, scalars of one type that compare equal (``1``, ``1.0`` and ``True`` are
    three values here, though Python calls them equal; a key that is not text, which a lookup would equate so,
    makes them unequal)."""
    if type(left) is not type(right):
        return False
    if type(left) is dict:
        return len(left) == len(right) and all(type(key) is str and key in right and _same(value, right[key])
                                               for key, value in left.items())
    if type(left) is list:
        return len(left) == len(right) and all(_same(one, other) for one, other in zip(left, right))
    return left == right


def _differences(stated: Any, written: Any, path: FieldPath) -> Iterator[Finding]:
    """Walk what the file states against what serialising kept."""
    if isinstance(stated, Mapping) and isinstance(written, Mapping):
        for key, value in stated.items():
            yield from _key_difference(key, value, written, path + (key,))
    elif isinstance(stated, list) and isinstance(written, list) and len(stated) == len(written):
        for index, (left, right) in enumerate(zip(stated, written)):
            yield from _differences(left, right, path + (index,))
    elif stated != written:
        yield _changed(stated, written, path)


def _key_difference(key: Any, value: Any, written: Mapping[str, Any], path: FieldPath) -> Iterator[Finding]:
    """The finding for one stated key, if serialising did not keep it as it is."""
    if value is None:
        yield (path, "roundtrip.null", Severity.WARNING,
               f"{dotted(path)} is null, which is the same as leaving it out; remove the line")
    elif key not in written:
        default = _DEFAULTS.get((key,), _MISSING)
        if value == default and type(value) is type(default):
            yield (path, "roundtrip.default", Severity.WARNING,
                   f"{dotted(path)}: {str(value).lower()} is the default; remove the line")
        else:
            yield (path, "roundtrip.lost", Severity.ERROR, f"{dotted(path)} does not survive serialising the spec")
    elif key == "torch_dtype" and isinstance(value, str) and value.startswith("torch."):
        yield (path, "roundtrip.torch-prefix", Severity.WARNING,
               f"torch_dtype {value!r} is read as {written[key]!r}; write {written[key]}")
    else:
        yield from _differences(value, written[key], path)


def _changed(stated: Any, written: Any, path: FieldPath) -> Finding:
    """An error: the value written back is not the value stated."""
    return (path, "roundtrip.lost", Severity.ERROR,
            f"{dotted(path)} is stated as {stated!r} but serialises as {written!r}")


_MISSING = object()
