"""Op profiles: each architecture family's layer kinds and what each kind runs, as data.

A family's behaviour lives in ``op_profiles/<arch>.yaml``, never in a
per-family code path: its layer kinds, each kind's attention flavour
(``full``, ``sliding``, ``chunked``, ``mla``, ``linear``, ``ssm``, ``cross``, ``none``), feed-forward flavour
(``dense``, ``moe``, ``none``) and :class:`~pipeline.spec.model.OpCounts`, the
Hugging Face ``model_type`` values it prices, the name patterns from which a
spec without ``arch`` gets it, and an optional default kind. ``vision.yaml``
(:data:`VISION_ARCH`) prices vision towers. The format's schema is
``schemas/op-profile.schema.json``; the counting conventions are in
``op_profiles/README.md``.

A kind may also state what its counts assume of a spec (``assumes``): the
spec field values of the model the counts were read from, such as
``qk_norm: true`` or ``num_shared_experts: 1``. A count is a number of calls,
and a spec whose flags say its layers run other calls (a shared expert the
counts lack, per-head norms they do not have) would be priced wrong without a
word; :mod:`pipeline.pricing.stack` refuses such a spec by those entries. The loader
checks that each entry names a flag or a count of the model spec (of a vision
tower, in the vision profile) and holds a value of its type, so a typo is
refused where it is written rather than never matching.

Profiles are loaded a folder at a time and cached per folder: a spec
repository may carry its own ``op_profiles/``, and every spec of a run is
resolved against the same set. A broken profile is not a bad spec: it raises
:class:`OpProfileError`, which the command reports with exit code 2, while a
spec that names a missing profile gets a :class:`~pipeline.spec.model.ModelSpecError`.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import typing
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple, Union

from pipeline.pricing.config_keys import shared_keys, shared_tower_keys
from pipeline.pricing.families import Family, family_problems, parse_family, spec_field_types
from pipeline.pricing.weights import (EMPTY, LAYER_PARTS, MODEL_PARTS, NONE, TOWER_PARTS, TOWER_SYMBOLS, Inventory,
                                      WeightFormatError, parse_weights)
from pipeline.spec.files import MAX_BYTES, open_regular
from pipeline.spec.model import ModelSpec, ModelSpecError, OpCounts, SpecIssue, VisionSpec, refuse
from pipeline.spec.problems import FieldPath, Location, Problem, Severity, dotted, near_misses
from pipeline.spec.resources import bundled_profiles_dir
from pipeline.spec.schema_pass import schema_problems

if TYPE_CHECKING:
    from pipeline.spec.yaml_source import SourceDoc

#: The arch of the vision towers' profile.
VISION_ARCH = "vision"

CODES: Dict[str, str] = {
    "profile.invalid": "An op profile breaks schemas/op-profile.schema.json (an unknown key, a kind missing an op, "
                       "a flavour that is not one of the allowed ones), or states a count that is not a whole "
                       "number below 2**63 (4.0, which the schema takes for an integer).",
    "profile.arch-stem": "An op profile's arch is not its file's stem.",
    "profile.draft": "An op profile still holds the draft key that modelspec reference --draft writes: its open "
                     "questions are not answered, so it prices nothing until they are and the key is deleted.",
    "profile.none": "The op profiles folder holds no profile at all.",
    "profile.default-kind": "An op profile's default is not one of its layer_kinds.",
    "profile.model-type-twice": "Two op profiles claim the same Hugging Face model_type.",
    "profile.assumes-field": "A kind's assumes names something that is not a flag or a count of a model spec (of "
                             "a vision tower, in the vision profile): a typo, or a field no count can depend on.",
    "profile.weights": "A weight inventory entry is malformed: a shape expression that is not integer arithmetic "
                       "over the spec's fields, or not a whole number from 0 to 2^63 - 1 for every spec (a "
                       "subtraction that can go negative, a divisor that can be 0, too long or too deep), a "
                       "condition that is not a flag, a part the place does not take, or a tensor listed twice.",
    "profile.assumes-value": "A kind's assumes gives a field a value of the wrong type: a flag takes true or false, "
                             "a count a whole number it can hold, and either may be 'stated'.",
    "profile.import": "An op profile's import section names something the schema cannot check: a fixed fact or a "
                      "key's field that is no model spec field (or a fixed value not of its type), a default for a "
                      "key no rule reads, an expression over something else than whole-number spec fields, or a "
                      "key both mapped and listed as ignored.",
    "stack.no-arch": "A spec states no arch and no op profile's match pattern picks one from its name: nothing "
                     "resolves its stack or counts it, so no configuration or inline ignore silences the warning "
                     "(--strict makes it fail the run), and a stated parameters is an error (params.unpriced).",
    "stack.ambiguous-arch": "A spec states no arch and several op profiles' match patterns fit its name.",
    "stack.unknown-arch": "A spec's arch names no op profile.",
    "stack.ops-kind": "A spec's ops names a layer kind its op profile lacks.",
}

_PROFILE_SCHEMA = "op-profile.schema.json"

#: The ``assumes`` value that asks only that a spec states the field, whatever its value.
STATED = "stated"

#: What a spec that leaves a field out is priced as, for the fields whose absence has a value: no shared
#: expert (``ModelSpec.shared_expert_width`` is 0), no leading dense layer and no MTP layer (the stack rules read
#: ``first_k_dense_replace`` and ``mtp_depth`` as 0). Any other absent field is unstated: the profile's counts
#: decide what it is, and only an assumption of :data:`STATED` is contradicted by its absence.
ABSENT_PRICED_AS: Mapping[str, int] = MappingProxyType({"num_shared_experts": 0, "first_k_dense_replace": 0,
                                                        "mtp_depth": 0})


class OpProfileError(ValueError):
    """An op profile is broken: a repository problem, not a spec's.

    Attributes:
        problems: Every problem found in the folder's profiles, located in
            their files.
    """

    def __init__(self, problems: Sequence[Problem]):
        self.problems: Tuple[Problem, ...] = tuple(sorted(problems))
        super().__init__("\n".join(f"{p.file}:{p.line}:{p.column}: [{p.code}] {p.message}" for p in self.problems))


@dataclass(frozen=True)
class Assumption:
    """A spec field's value that a kind's op counts were read under (one entry of a kind's ``assumes``).

    Attributes:
        field: A model spec field (a vision tower's, in the vision profile).
        value: ``True`` or ``False`` for a flag, a whole number for a count,
            or :data:`STATED`: the field is stated, whatever its value.
    """

    field: str
    value: Union[bool, int, str]

    def holds_for(self, stated: Any) -> bool:
        """Whether a spec whose field holds *stated* (``None``: absent) fits the counts.

        An absent field is read as :data:`ABSENT_PRICED_AS` says (an absent
        ``num_shared_experts`` is 0 shared experts); any other absent field is
        unstated and fits every assumption but :data:`STATED`.
        """
        if self.value == STATED:
            return stated is not None
        if stated is None:
            stated = ABSENT_PRICED_AS.get(self.field)
        return stated is None or (type(stated) is type(self.value) and stated == self.value)


@dataclass(frozen=True)
class LayerKind:
    """One kind of layer of a family: what it runs per forward pass.

    Attributes:
        name: The kind's name, as ``layers`` and ``layer_types`` spell it.
        ops: Its op counts (calls per layer per forward pass).
        attention: ``full``, ``sliding``, ``chunked``, ``mla``, ``linear``, ``ssm``, ``cross`` or ``none``.
        ffn: ``dense``, ``moe`` or ``none``.
        assumes: What the counts assume of a spec, in file order; empty
            when they assume nothing, or when a spec declared its own ops.
        weights: One layer's weight inventory (:mod:`pipeline.pricing.weights`);
            empty when the profile states none, and the kind is not counted.
    """

    name: str
    ops: OpCounts
    attention: str
    ffn: str
    assumes: Tuple[Assumption, ...] = ()
    weights: Inventory = NONE


@dataclass(frozen=True)
class OpProfile:
    """One family's profile, as ``op_profiles/<arch>.yaml`` states it.

    Attributes:
        arch: The family's name, the file's stem.
        summary: One line saying what the family is.
        source: The modelling code the counts come from.
        model_types: The Hugging Face ``model_type`` values it prices.
        match: fnmatch patterns on a lower-cased spec name.
        default: The kind a body layer is when no other rule gives one.
        layer_kinds: The kinds by name, in file order.
        path: The file it was read from.
        family: How ``modelspec import`` reads a config of one of
            :attr:`model_types` (its ``import`` section); ``None`` when no
            config is imported as this profile.
        model_weights: The tensors outside the layers (embedding, position
            tables, final norms, head).
        mtp_weights: What one MTP layer holds beside its decoder layer.
        vision_weights: The family's tower outside its blocks (patch
            embedding, position table, post-norm, projector).
        vision_kinds: ``{vision kind: one block's weights}`` of the family's tower.
    """

    arch: str
    summary: str
    source: str
    model_types: Tuple[str, ...]
    match: Tuple[str, ...]
    default: Optional[str]
    layer_kinds: Mapping[str, LayerKind]
    path: Path
    family: Optional[Family] = None
    model_weights: Inventory = NONE
    mtp_weights: Inventory = NONE
    vision_weights: Inventory = NONE
    vision_kinds: Mapping[str, Inventory] = dataclass_field(default_factory=lambda: EMPTY)

    def op_counts(self, ops: Optional[Mapping[str, OpCounts]] = None) -> Dict[str, OpCounts]:
        """Return ``{kind: OpCounts}``: the profile's counts, replaced by a spec's declared *ops*.

        Raises:
            ModelSpecError: ``stack.ops-kind`` for each kind of *ops* the profile lacks.
        """
        counts = {name: kind.ops for name, kind in self.layer_kinds.items()}
        unknown = sorted(set(ops or {}) - set(counts))
        if unknown:
            raise ModelSpecError([
                SpecIssue(("ops", kind), "stack.ops-kind",
                          f"ops.{kind} names a kind op profile {self.arch!r} does not have; "
                          f"its kinds are {sorted(counts)}")
                for kind in unknown])
        counts.update(ops or {})
        return counts

    def matches(self, name: str) -> bool:
        """Whether one of :attr:`match` fits *name*, compared lower-cased."""
        lowered = name.lower()
        return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in self.match)


@dataclass(frozen=True)
class OpProfiles:
    """Every profile of one folder, by arch.

    Attributes:
        root: The folder they were read from.
        profiles: ``{arch: OpProfile}``, sorted by arch.
    """

    root: Path
    profiles: Mapping[str, OpProfile]

    def get(self, arch: str) -> OpProfile:
        """Return the profile *arch*.

        Raises:
            ModelSpecError: ``stack.unknown-arch``, naming the profiles there are.
        """
        try:
            return self.profiles[arch]
        except KeyError:
            raise refuse(("arch",), "stack.unknown-arch",
                         f"arch {arch!r} names no op profile; the profiles are "
                         f"{sorted(a for a in self.profiles if a != VISION_ARCH)}") from None

    def infer_arch(self, name: str) -> str:
        """Return the arch whose ``match`` patterns fit the spec name *name*.

        Raises:
            ModelSpecError: ``stack.no-arch`` when no profile fits,
                ``stack.ambiguous-arch`` naming the candidates when several do.
        """
        found = [profile.arch for profile in self.profiles.values() if profile.matches(name)]
        if len(found) == 1:
            return found[0]
        if found:
            raise refuse(("name",), "stack.ambiguous-arch",
                         f"no arch is stated and the name {name!r} matches the profiles {found}; "
                         "state arch: one of them")
        raise refuse(("name",), "stack.no-arch",
                     f"no arch is stated and no op profile's match pattern fits the name {name!r}, so the layer "
                     f"stack cannot be resolved; state arch: one of "
                     f"{sorted(a for a in self.profiles if a != VISION_ARCH)}")

    def for_model_type(self, model_type: str) -> OpProfile:
        """Return the profile that lists the Hugging Face *model_type*.

        Raises:
            ModelSpecError: ``stack.unknown-arch`` naming every known model type.
        """
        for profile in self.profiles.values():
            if model_type in profile.model_types:
                return profile
        known = sorted(t for profile in self.profiles.values() for t in profile.model_types)
        raise refuse(("model_type",), "stack.unknown-arch",
                     f"no op profile prices model_type {model_type!r}; the known model types are {known}")


class ProfileStore(Protocol):
    """Where checked profile documents are kept between runs (the cache layer's
    :class:`~pipeline.cache.results.ProfileCache`), handed to :func:`load_op_profiles` from above; hashable, as
    the per-process memo keys on it."""

    def key(self, contents: str) -> str:
        """What decides the documents of a folder whose files' names and bytes have the :func:`contents_digest`
        *contents*."""

    def load(self, key: str) -> Optional[Dict[str, dict]]:
        """The documents (``{file name: document}``) kept under *key*, or ``None``."""

    def store(self, key: str, documents: Mapping[str, Any]) -> None:
        """Keep *documents* under *key*."""


@functools.lru_cache(maxsize=None)
def _load_folder(root: Path, store: Optional[ProfileStore] = None) -> OpProfiles:
    """Read and check every ``*.yaml`` profile of *root* once per process.

    With a *store*, the checked documents are kept there, keyed by the folder's files' names and bytes and by
    modelspec's environment (version, code, schemas); on a hit the profiles are built from the kept documents
    without reading YAML, the schema or the rules again. Only a folder with no problem is kept, so a hit has
    none; the profiles built are the same either way. Behind the store, a folder whose files' names and bytes
    this process has already checked (another copy of the same profiles) is built from those documents
    (:data:`_CHECKED`): the check is a function of names and bytes alone.
    """
    paths = sorted(root.glob("*.yaml"))
    contents = contents_digest(paths)
    key = store.key(contents) if store is not None and paths and contents is not None else None
    if key is not None:
        kept = store.load(key)
        if kept is not None and sorted(kept) == [path.name for path in paths]:
            return _built(root, kept)
    documents = _CHECKED.get(contents) if contents is not None else None
    if documents is not None:
        profiles = _built(root, documents)
    else:
        profiles, documents = _checked_folder(root, paths)
        if contents is None or contents_digest(paths) != contents:  # a file changed meanwhile: neither kept
            return profiles
        _remember(contents, documents)
    if key is not None:
        store.store(key, documents)
    return profiles


#: How many checked folders :data:`_CHECKED` holds: a process reads one or two (the repository's, the bundled).
_CHECKED_HELD = 4

#: The checked documents (``{file name: document}``) of the profiles folders this process read without a problem,
#: by the digest of their files' names and bytes (:func:`contents_digest`), the most recent last.
_CHECKED: Dict[str, Dict[str, dict]] = {}


def contents_digest(paths: Sequence[Path]) -> Optional[str]:
    """The SHA-256 of the files *paths*' names and bytes (a profiles folder's ``*.yaml``, in name order: what its
    check is a function of), or ``None`` when one is no regular file or cannot be read (the check says why)."""
    hasher = hashlib.sha256()
    for path in paths:
        try:
            with open_regular(path) as handle:  # a FIFO or a device in the folder blocks no read
                data = handle.read(MAX_BYTES + 1)
        except OSError:
            return None
        hasher.update(f"{path.name}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        hasher.update(data)
    return hasher.hexdigest()


def _remember(contents: str, documents: Dict[str, dict]) -> None:
    """Hold *documents* in :data:`_CHECKED` under *contents*, forgetting the oldest beyond :data:`_CHECKED_HELD`."""
    _CHECKED.pop(contents, None)
    _CHECKED[contents] = documents
    while len(_CHECKED) > _CHECKED_HELD:
        del _CHECKED[next(iter(_CHECKED))]


def _built(root: Path, documents: Mapping[str, Mapping]) -> OpProfiles:
    """The profiles of *root* from its checked *documents* (``{file name: document}``), each built on use."""
    return OpProfiles(root, BuiltOnUse({data["arch"]: (data, root / name) for name, data in documents.items()}))


def forget_read_profiles() -> None:
    """Forget every profiles folder this process read: the next load reads as a fresh process does (the store,
    then the YAML)."""
    _load_folder.cache_clear()
    _CHECKED.clear()


class BuiltOnUse(Mapping):
    """Checked profile documents by arch, each built into its :class:`OpProfile` when first looked up.

    What a profile cache hit gives: a run the result cache answers looks no
    profile up, and ``show`` looks up one, so neither pays to build the
    folder's every profile (weights, families, expressions). The archs are
    known without building anything, and so is each profile's file
    (:meth:`path_of`, what the result cache's keys are made of).
    """

    def __init__(self, documents: Mapping[str, Tuple[Mapping, Path]]) -> None:
        self._documents = dict(sorted(documents.items()))
        self._built: Dict[str, OpProfile] = {}

    def __getitem__(self, arch: str) -> OpProfile:
        built = self._built.get(arch)
        if built is None:
            data, path = self._documents[arch]
            built = self._built[arch] = _profile(data, path)
        return built

    def __iter__(self):
        return iter(self._documents)

    def __len__(self) -> int:
        return len(self._documents)

    def __contains__(self, arch: object) -> bool:
        return arch in self._documents

    def path_of(self, arch: str) -> Path:
        """The file the profile *arch* was read from, without building it.

        Raises:
            KeyError: If there is no profile *arch*.
        """
        return self._documents[arch][1]


def profile_files(profiles: OpProfiles) -> Dict[str, Path]:
    """Each profile's file by arch (sorted), built or not."""
    found = profiles.profiles
    if isinstance(found, BuiltOnUse):
        return {arch: found.path_of(arch) for arch in found}
    return {arch: profile.path for arch, profile in found.items()}


def _checked_folder(root: Path, paths: Sequence[Path]) -> Tuple[OpProfiles, Dict[str, dict]]:
    """The profiles of the files *paths* of *root*, read and checked, and each file's checked document by name.

    Raises:
        OpProfileError: Every problem found in the profiles.
    """
    from pipeline.spec import yaml_source  # pylint: disable=import-outside-toplevel

    problems = []
    profiles: Dict[str, OpProfile] = {}
    docs: Dict[str, "SourceDoc"] = {}
    for path in paths:
        doc = yaml_source.load_path(path)
        found = [p for p in doc.problems if p.severity is Severity.ERROR]
        if not found and isinstance(doc.data, dict) and "draft" in doc.data:
            found = [_draft_problem(doc)]
        if not found and not doc.fatal:
            found = [_as_profile_problem(p) for p in schema_problems(doc, _PROFILE_SCHEMA, "schema")]
        if not found:
            found = _profile_rules(doc, path)
        if not found:
            try:
                profiles[doc.data["arch"]] = _profile(doc.data, path)
                docs[doc.data["arch"]] = doc
            except ModelSpecError as error:
                # The schema takes 4.0 and 2**70 as integers; OpCounts does not.
                found = [_located(doc, issue.path, "profile.invalid", issue.message) for issue in error.issues]
            except WeightFormatError as error:
                found = [_located(doc, error.path, "profile.weights", str(error))]
        problems.extend(found)
    problems.extend(_model_type_clashes(profiles, docs))
    if not problems and not profiles:
        problems.append(Problem(str(root), 1, 1, "load", "profile.none", Severity.ERROR,
                                f"{root} holds no op profile (*.yaml); add the families' profiles, or remove "
                                "the folder to use the ones bundled with modelspec"))
    if problems:
        raise OpProfileError(problems)
    return (OpProfiles(root, dict(sorted(profiles.items()))),
            {profile.path.name: docs[arch].data for arch, profile in profiles.items()})


def _draft_problem(doc: "SourceDoc") -> Problem:
    """``profile.draft`` at the draft key, counting its open questions."""
    questions = doc.data["draft"]
    count = len(questions) if isinstance(questions, list) else 1
    return _located(doc, ("draft",), "profile.draft",
                    f"this op profile is a draft of modelspec reference --draft with {count} open question"
                    f"{'s' if count != 1 else ''} under draft; answer each against the modelling code, then delete "
                    "the draft key", doc.key_location(("draft",)))


def _as_profile_problem(problem: Problem) -> Problem:
    """Re-code a schema problem of a profile file as ``profile.invalid``."""
    return Problem(problem.file, problem.line, problem.column, problem.pass_name, "profile.invalid",
                   Severity.ERROR, problem.message, problem.path)


def _located(doc: "SourceDoc", path: FieldPath, code: str, message: str, at: Optional[Location] = None) -> Problem:
    """A profile problem at *path* of *doc*: at *at* when given, else where the value at *path* is."""
    where = at or doc.locate(path)
    return Problem(doc.file, where.line, where.column, "schema", code, Severity.ERROR, message, path)


def _profile_rules(doc: "SourceDoc", path: Path) -> List[Problem]:
    """The rules the schema cannot state: arch is the file stem, default is a kind, assumes names typed fields."""
    data = doc.data
    found = []
    if data["arch"] != path.stem:
        found.append(_located(doc, ("arch",), "profile.arch-stem",
                              f"arch is {data['arch']!r} but the file is {path.name}; write arch: {path.stem}"))
    default = data.get("default")
    if default is not None and default not in data["layer_kinds"]:
        found.append(_located(doc, ("default",), "profile.default-kind",
                              f"default {default!r} is not one of the layer_kinds {sorted(data['layer_kinds'])}"))
    record = "vision tower" if path.stem == VISION_ARCH else "model spec"
    for name, kind in data["layer_kinds"].items():
        for field, value in kind.get("assumes", {}).items():
            where = ("layer_kinds", name, "assumes", field)
            refusal = _assumption_refusal(field, value, record)
            if refusal is not None:
                code, message = refusal
                at = doc.key_location(where) if code == "profile.assumes-field" else None
                found.append(_located(doc, where, code, f"{dotted(where[:-1])}: {message}", at))
    if "import" in data:
        for where, message in family_problems(data["import"], spec_field_types(), shared_keys(),
                                               spec_field_types(tower=True), shared_tower_keys(),
                                               tuple(data["layer_kinds"])):
            at = doc.key_location(("import",) + where)
            found.append(_located(doc, ("import",) + where, "profile.import", f"import.{message}", at))
    return found


@functools.lru_cache(maxsize=None)
def assumable_fields(record: str) -> Mapping[str, type]:
    """The fields an ``assumes`` entry may name, each with its type (``bool`` or ``int``).

    Args:
        record: ``"model spec"`` (:class:`~pipeline.spec.model.ModelSpec`) or
            ``"vision tower"`` (:class:`~pipeline.spec.model.VisionSpec`).

    Returns:
        The record's flags and whole-number fields, read from its type
        annotations: the fields a count can depend on.
    """
    hints = typing.get_type_hints(VisionSpec if record == "vision tower" else ModelSpec)
    return MappingProxyType({name: kind for name, hint in hints.items() for kind in (bool, int)
                             if hint in (kind, Optional[kind])})


def _assumption_refusal(field: Any, value: Any, record: str) -> Optional[Tuple[str, str]]:
    """``(code, message)`` when ``field: value`` is not a valid ``assumes`` entry for *record*, else ``None``."""
    fields = assumable_fields(record)
    if field not in fields:
        close = near_misses(str(field), fields)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return ("profile.assumes-field",
                f"{field!r} is not a flag or a count of a {record}, so no spec could contradict it{hint}")
    if value == STATED:
        return None
    if fields[field] is bool:
        if isinstance(value, bool):
            return None
        return ("profile.assumes-value",
                f"{field} is a flag: assume true, false or {STATED}, not {value!r}")
    least = 0 if field in ABSENT_PRICED_AS else 1
    if type(value) is int and value >= least:
        return None
    return ("profile.assumes-value",
            f"{field} is a count a spec states as a whole number from {least}: assume one, or {STATED}, "
            f"not {value!r}")


def _profile(data: Mapping, path: Path) -> OpProfile:
    """Build an :class:`OpProfile` from a checked document.

    Raises:
        ModelSpecError: For a count OpCounts refuses.
        WeightFormatError: For a malformed inventory entry.
    """
    kinds = {
        name: LayerKind(name, OpCounts.from_dict(kind["ops"], ("layer_kinds", name, "ops")),
                        kind["attention"], kind["ffn"],
                        tuple(Assumption(field, value) for field, value in kind.get("assumes", {}).items()),
                        parse_weights(kind.get("weights", ()), ("layer_kinds", name, "weights"),
                                      parts=LAYER_PARTS))
        for name, kind in data["layer_kinds"].items()
    }
    vision = data.get("vision", {})
    vision_kinds = {
        name: parse_weights(kind["weights"], ("vision", "layer_kinds", name, "weights"), TOWER_SYMBOLS,
                            LAYER_PARTS)
        for name, kind in vision.get("layer_kinds", {}).items()
    }
    return OpProfile(data["arch"], data["summary"], data["source"], tuple(data["model_types"]),
                     tuple(data["match"]), data.get("default"), kinds, path,
                     family=parse_family(data["import"]) if "import" in data else None,
                     model_weights=parse_weights(data.get("model_weights", ()), ("model_weights",),
                                                 parts=MODEL_PARTS),
                     mtp_weights=parse_weights(data.get("mtp_weights", ()), ("mtp_weights",), parts=("mtp",)),
                     vision_weights=parse_weights(vision.get("weights", ()), ("vision", "weights"), TOWER_SYMBOLS,
                                                  TOWER_PARTS),
                     vision_kinds=MappingProxyType(vision_kinds))


def _model_type_clashes(profiles: Mapping[str, OpProfile], docs: Mapping[str, "SourceDoc"]) -> List[Problem]:
    """A problem for each model_type that two profiles claim, at its entry in the later profile (by arch)."""
    owner: Dict[str, str] = {}
    found = []
    for arch, profile in sorted(profiles.items()):
        for index, model_type in enumerate(profile.model_types):
            if model_type in owner:
                found.append(_located(docs[arch], ("model_types", index), "profile.model-type-twice",
                                      f"model_type {model_type!r} is claimed by both {owner[model_type]} and "
                                      f"{arch}; keep it in one profile"))
            owner.setdefault(model_type, arch)
    return found


def load_op_profiles(root: Optional[Path] = None, store: Optional[ProfileStore] = None) -> OpProfiles:
    """Return every profile of the folder *root* (default: the bundled ones), cached per folder.

    Args:
        root: The profiles folder.
        store: Where the checked profiles are kept between runs (:class:`ProfileStore`); ``None`` reads and
            checks them afresh.

    Raises:
        OpProfileError: If any profile of the folder is broken.
    """
    return _load_folder((root or bundled_profiles_dir()).resolve(), store)


def load_op_profile(arch: str, root: Optional[Path] = None) -> OpProfile:
    """Return the profile *arch* of the folder *root* (default: the bundled ones).

    Raises:
        OpProfileError: If any profile of the folder is broken.
        ModelSpecError: ``stack.unknown-arch`` if there is no such profile.
    """
    return load_op_profiles(root).get(arch)


def resolve_ops(arch: str, ops: Optional[Mapping[str, OpCounts]] = None,
                root: Optional[Path] = None) -> Dict[str, OpCounts]:
    """Return each kind's op counts for *arch*: the profile's, replaced by a spec's declared *ops*.

    Args:
        arch: The profile.
        ops: ``{kind: OpCounts}`` a spec declares for a model the profile's
            counts do not describe; its kinds must be the profile's.
        root: The profiles folder (default: the bundled ones).

    Raises:
        ModelSpecError: ``stack.unknown-arch``, or ``stack.ops-kind`` for each
            declared kind the profile lacks.
        OpProfileError: If a profile of the folder is broken.
    """
    return load_op_profile(arch, root).op_counts(ops)
