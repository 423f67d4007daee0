"""JSON Schema validation of a loaded document, as located problems: the only module that imports ``jsonschema``.

The schemas (``schemas/*.schema.json``, draft 2020-12) are the contract that
editors, check-jsonschema and this pass share, so a spec is checked against
exactly the file a user's editor reads. Every error is reported, each at the
YAML line and column of the offending value (of the key, for a key that is
not allowed), with its JSON Pointer, in words that say what to write: a
validator's raw message (``'8' is not of type 'integer'``) names neither the
field nor the fix. For ``oneOf``/``anyOf`` the branch that fits best is
reported (``jsonschema.exceptions.best_match``), not every branch's complaint.

The validators are built once per schema per process and imported on first
use, so commands that never validate do not pay for them. Speed comes from
jsonschema-rs (a Rust implementation, well kept and spec-compliant), which
decides valid or not; python-jsonschema, whose errors carry the validator,
the schema and the instance a clear message needs, explains only the files
that fail. Both implement draft 2020-12, so they agree on what is valid.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional

from pipeline.spec.model import RUN_PRECISION_KEYS, unknown_key_message
from pipeline.spec.problems import FieldPath, Problem, Severity, dotted, near_misses
from pipeline.spec.resources import schema_path

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

    from pipeline.spec.yaml_source import SourceDoc

MODEL_SPEC_SCHEMA = "model-spec.schema.json"

CODES: Dict[str, str] = {
    "schema.type": "A value has the wrong JSON type (a string where an integer belongs, a boolean for a count).",
    "schema.unknown-key": "A key the schema does not define.",
    "schema.required": "A required key is missing.",
    "schema.range": "A number is outside its allowed range (minimum, maximum).",
    "schema.enum": "A value is not one of the allowed values.",
    "schema.length": "A string, list or mapping is empty or too long.",
    "schema.pattern": "A string does not match its pattern.",
    "schema.invalid": "Any other schema violation (dependent keys, uniqueness, ...).",
}

# Which code each JSON Schema keyword's failure gets.
#: Unknown keys of one mapping that get a "did you mean" (``difflib``, some 0.2 ms each); the rest are told
#: without one. A report shows at most 20 problems of one code per file, so 10,000 unknown keys cost what 100 do.
NEAR_MISS_KEYS = 100

_KEYWORD_CODES = {
    "type": "schema.type",
    "additionalProperties": "schema.unknown-key",
    "unevaluatedProperties": "schema.unknown-key",
    "required": "schema.required",
    "minimum": "schema.range", "maximum": "schema.range",
    "exclusiveMinimum": "schema.range", "exclusiveMaximum": "schema.range",
    "enum": "schema.enum", "const": "schema.enum",
    "minLength": "schema.length", "maxLength": "schema.length",
    "minItems": "schema.length", "maxItems": "schema.length",
    "minProperties": "schema.length", "maxProperties": "schema.length",
    "pattern": "schema.pattern",
    "dependentRequired": "schema.required",
    "not": "schema.enum",
}

_TYPE_WORDS = {
    "integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
    "array": "a list", "object": "a mapping", "null": "null",
}


@functools.lru_cache(maxsize=None)
def _schema(schema_name: str) -> Dict[str, Any]:
    """The bundled schema *schema_name*, read once."""
    return json.loads(schema_path(schema_name).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _validator(schema_name: str) -> Any:
    """The draft 2020-12 validator (python-jsonschema) of *schema_name*, built once: it explains the errors."""
    import jsonschema  # pylint: disable=import-outside-toplevel

    return jsonschema.Draft202012Validator(_schema(schema_name), format_checker=jsonschema.FormatChecker())


@functools.lru_cache(maxsize=None)
def _fast_validator(schema_name: str) -> Any:
    """The same schema compiled by jsonschema-rs (Rust), which only says valid or not, some fifty times faster.

    Most files a run checks are valid, so they are accepted by this one alone;
    an invalid one is explained by :func:`_validator`. ``None`` where
    jsonschema-rs is not installed.
    """
    try:
        import jsonschema_rs  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    return jsonschema_rs.Draft202012Validator(_schema(schema_name))


def schema_problems(doc: "SourceDoc", schema_name: str = MODEL_SPEC_SCHEMA,
                    pass_name: str = "schema") -> List[Problem]:
    """Validate ``doc.data`` against the bundled schema *schema_name*; one located problem per error.

    Args:
        doc: A loaded document whose ``data`` is not ``None``.
        schema_name: A file of ``schemas/``.
        pass_name: The pass the problems are reported under.

    Returns:
        The problems, sorted; empty when the document is valid.
    """
    fast = _fast_validator(schema_name)
    if fast is not None and fast.is_valid(doc.data):
        return []
    problems = []
    for error in _validator(schema_name).iter_errors(doc.data):
        for leaf in _leaves(error):
            problems.extend(_problems_of(leaf, doc, schema_name, pass_name))
    return sorted(set(problems))


def best_error(errors: Iterable["ValidationError"]) -> Optional["ValidationError"]:
    """The error python-jsonschema's ``best_match`` picks as the one to explain *errors* by (the most relevant,
    deepest), or ``None`` when there is none; jsonschema is imported by the validator that made them."""
    from jsonschema.exceptions import best_match  # pylint: disable=import-outside-toplevel

    return best_match(errors)


def _leaves(error: "ValidationError") -> Iterator["ValidationError"]:
    """The error itself, or for ``oneOf``/``anyOf`` the deepest error of the best-fitting branch."""
    while error.validator in ("oneOf", "anyOf") and error.context:
        error = best_error(error.context)
    yield error


def _problems_of(error: "ValidationError", doc: "SourceDoc", schema_name: str, pass_name: str) -> List[Problem]:
    """Turn one validation error into located problems (one per unknown key)."""
    path: FieldPath = tuple(error.absolute_path)
    code = _KEYWORD_CODES.get(str(error.validator), "schema.invalid")
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        known = sorted(error.schema.get("properties", {}))
        return [_problem(doc, path + (key,), code, _unknown_key(path, key, known, schema_name,
                                                                suggest=index < NEAR_MISS_KEYS), pass_name,
                         at_key=True)
                for index, key in enumerate(_extra_keys(error))]
    if error.validator == "required":
        return [_problem(doc, path + (key,), code, f"{dotted(path + (key,))} is required and not stated", pass_name)
                for key in error.validator_value if key not in error.instance]
    if error.validator == "dependentRequired":
        return [_problem(doc, path + (key,), code,
                         f"{dotted(path + (key,))} is stated without {', '.join(missing)}; state both or neither",
                         pass_name, at_key=True)
                for key, needs in error.validator_value.items() if key in error.instance
                for missing in [[need for need in needs if need not in error.instance]] if missing]
    return [_problem(doc, path, code, _MESSAGES.get(str(error.validator), _raw)(error, path), pass_name)]


def _problem(doc: "SourceDoc", path: FieldPath, code: str, message: str, pass_name: str,
             at_key: bool = False) -> Problem:
    """A problem at the value (or key) of *path* in *doc*."""
    where = (doc.key_location(path) if at_key else None) or doc.locate(path)
    return Problem(doc.file, where.line, where.column, pass_name, code, Severity.ERROR, message, path)


def _extra_keys(error: "ValidationError") -> List[Any]:
    """The keys an ``additionalProperties: false`` error is about."""
    allowed = set(error.schema.get("properties", {}))
    return [key for key in error.instance if key not in allowed]


def _unknown_key(path: FieldPath, key: Any, known: List[str], schema_name: str, suggest: bool = True) -> str:
    """The message for a key the schema does not define.

    A near miss of a known key (``num_key_value_head``) is asked about by
    name (when *suggest*); otherwise the model spec's top level says where a
    run's keys go, and a nested mapping lists its keys.
    """
    top_of_spec = not path and schema_name == MODEL_SPEC_SCHEMA
    close = near_misses(str(key), known, cutoff=0.8) if suggest else []
    if close and not (top_of_spec and key in RUN_PRECISION_KEYS):
        where = "model spec key" if top_of_spec else f"key in {dotted(path) or 'the top level'}:"
        return f"unknown {where} {key!r}; did you mean {close[0]!r}?"
    if top_of_spec:
        return unknown_key_message(key)
    return f"unknown key {key!r} in {dotted(path) or 'the top level'}; the keys are {known}"


def _name(path: FieldPath) -> str:
    """The field a message names."""
    return dotted(path) or "the document"


def _type_message(error: "ValidationError", path: FieldPath) -> str:
    """``hidden_size must be an integer, got '8'; write 8 without quotes``."""
    expected = error.validator_value
    types = [t for t in (expected if isinstance(expected, list) else [expected]) if t != "null"]
    wanted = " or ".join(_TYPE_WORDS.get(t, t) for t in types)
    expected = types[0] if len(types) == 1 else types
    value = error.instance
    message = f"{_name(path)} must be {wanted}, got {_show(value)}"
    if isinstance(value, bool) and expected in ("integer", "number"):
        return message + "; a count is not true or false"
    if isinstance(value, str) and expected in ("integer", "number") and _is_number_text(value):
        return message + f"; write {value.strip()} without quotes"
    if isinstance(value, str) and expected == "boolean" and value.lower() in ("true", "false"):
        return message + f"; write {value.lower()} without quotes"
    return message


def _is_number_text(text: str) -> bool:
    """Whether *text* reads as a JSON number."""
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() not in ("nan", "inf", "-inf", "+inf")


def _show(value: Any) -> str:
    """A value as the user wrote it: ``true``, ``'8'``, ``4096.0``, ``null``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return repr(value)


def _range_message(error: "ValidationError", path: FieldPath) -> str:
    """``hidden_size must be at least 1, got -1``."""
    words = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "greater than",
             "exclusiveMaximum": "less than"}
    return f"{_name(path)} must be {words[str(error.validator)]} {error.validator_value}, got {_show(error.instance)}"


def _enum_message(error: "ValidationError", path: FieldPath) -> str:
    """``attention must be one of ['full', ...], got 'ful'``.

    A list of names that also admits each with a ``torch.`` prefix (``torch_dtype``)
    is told by its plain names, the prefix said once.
    """
    allowed = error.validator_value if error.validator == "enum" else [error.validator_value]
    names = [value for value in allowed if value is not None]
    plain = [value for value in names if not (isinstance(value, str) and value.startswith("torch.")
                                              and value.removeprefix("torch.") in names)]
    if len(plain) < len(names):
        return (f"{_name(path)} must be one of {', '.join(map(str, plain))} (a torch. prefix may be written), "
                f"got {_show(error.instance)}")
    return f"{_name(path)} must be one of {allowed}, got {_show(error.instance)}"


def _pattern_message(error: "ValidationError", path: FieldPath) -> str:
    """``arch must be lower-case letters, digits and _, got 'Llama'``, in words where the pattern has some."""
    words = _PATTERN_WORDS.get(error.validator_value)
    if words is None:
        return f"{_name(path)} must match the pattern {error.validator_value}, got {_show(error.instance)}"
    return f"{_name(path)} must be {words}, got {_show(error.instance)}"


# The schemas' patterns, in words.
_PATTERN_WORDS = {
    "^[a-z0-9_]+$": "lower-case letters, digits and _ (an op profile's file name)",
    "^[a-z][a-z0-9_]*$": "lower-case letters, digits and _, starting with a letter (a layer kind's name)",
    "^[A-Za-z0-9_-][A-Za-z0-9._-]*$": "letters, digits, '.', '_' and '-', not starting with '.' (it names the "
                                      "spec's artifact file)",
    "^[^A-Z]+$": "lower case",
    "^[^\\n]+$": "one line",
}


def _length_message(error: "ValidationError", path: FieldPath) -> str:
    """``layers must not be empty``, or the bound for a non-zero one."""
    if error.validator in ("minLength", "minItems", "minProperties") and error.validator_value == 1:
        return f"{_name(path)} must not be empty; leave the key out instead"
    return f"{_name(path)}: {error.message}"


def _raw(error: "ValidationError", path: FieldPath) -> str:
    """The validator's own message, prefixed with the field."""
    return f"{_name(path)}: {error.message}"


_MESSAGES: Dict[str, Callable[["ValidationError", FieldPath], str]] = {
    "type": _type_message,
    "minimum": _range_message, "maximum": _range_message,
    "exclusiveMinimum": _range_message, "exclusiveMaximum": _range_message,
    "enum": _enum_message, "const": _enum_message,
    "pattern": _pattern_message,
    "not": lambda error, path: f"{_name(path)} must not be {_show(error.instance)}, which is reserved",
    "minLength": _length_message, "minItems": _length_message, "minProperties": _length_message,
}
