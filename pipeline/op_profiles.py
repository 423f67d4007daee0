"""Op profiles: each architecture family's layer kinds and what each kind runs, as data.

A family's behaviour lives in ``op_profiles/<arch>.yaml``, never in a
per-family code path: its layer kinds, each kind's attention flavour
(``full``, ``sliding``, ``mla``, ``linear``, ``none``), feed-forward flavour
(``dense``, ``moe``, ``none``) and :class:`~pipeline.model.OpCounts`, the
Hugging Face ``model_type`` values it prices, the name patterns from which a
spec without ``arch`` gets it, and an optional default kind. ``vision.yaml``
(:data:`VISION_ARCH`) prices vision towers. The format's schema is
``schemas/op-profile.schema.json``; the counting conventions are in
``op_profiles/README.md``.

Profiles are loaded a folder at a time and cached per folder: a spec
repository may carry its own ``op_profiles/``, and every spec of a run is
resolved against the same set. A broken profile is not a bad spec: it raises
:class:`OpProfileError`, which the command reports with exit code 2, while a
spec that names a missing profile gets a :class:`~pipeline.model.ModelSpecError`.
"""

from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Tuple

from pipeline.model import ModelSpecError, OpCounts, SpecIssue, refuse
from pipeline.problems import FieldPath, Problem, Severity

if TYPE_CHECKING:
    from pipeline.yaml_source import SourceDoc

#: The arch of the vision towers' profile.
VISION_ARCH = "vision"

CODES: Dict[str, str] = {
    "profile.invalid": "An op profile breaks schemas/op-profile.schema.json (an unknown key, a kind missing an op, "
                       "a flavour that is not one of the allowed ones), or states a count that is not a whole "
                       "number below 2**63 (4.0, which the schema takes for an integer).",
    "profile.arch-stem": "An op profile's arch is not its file's stem.",
    "profile.none": "The op profiles folder holds no profile at all.",
    "profile.default-kind": "An op profile's default is not one of its layer_kinds.",
    "profile.model-type-twice": "Two op profiles claim the same Hugging Face model_type.",
    "stack.no-arch": "A spec states no arch and no op profile's match pattern picks one from its name.",
    "stack.ambiguous-arch": "A spec states no arch and several op profiles' match patterns fit its name.",
    "stack.unknown-arch": "A spec's arch names no op profile.",
    "stack.ops-kind": "A spec's ops names a layer kind its op profile lacks.",
}

_PROFILE_SCHEMA = "op-profile.schema.json"


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
class LayerKind:
    """One kind of layer of a family: what it runs per forward pass.

    Attributes:
        name: The kind's name, as ``layers`` and ``layer_types`` spell it.
        ops: Its op counts (calls per layer per forward pass).
        attention: ``full``, ``sliding``, ``mla``, ``linear`` or ``none``.
        ffn: ``dense``, ``moe`` or ``none``.
    """

    name: str
    ops: OpCounts
    attention: str
    ffn: str


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
    """

    arch: str
    summary: str
    source: str
    model_types: Tuple[str, ...]
    match: Tuple[str, ...]
    default: Optional[str]
    layer_kinds: Mapping[str, LayerKind]
    path: Path

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


def bundled_profiles_dir() -> Path:
    """The op profiles that ship with modelspec."""
    from pipeline.resources import data_dir  # pylint: disable=import-outside-toplevel
    return data_dir("op_profiles")


@functools.lru_cache(maxsize=None)
def _load_folder(root: Path) -> OpProfiles:
    """Read and check every ``*.yaml`` profile of *root* once per process."""
    from pipeline import yaml_source  # pylint: disable=import-outside-toplevel
    from pipeline.schema_pass import schema_problems  # pylint: disable=import-outside-toplevel

    problems = []
    profiles: Dict[str, OpProfile] = {}
    docs: Dict[str, "SourceDoc"] = {}
    for path in sorted(root.glob("*.yaml")):
        doc = yaml_source.load_path(path)
        found = [p for p in doc.problems if p.severity is Severity.ERROR]
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
        problems.extend(found)
    problems.extend(_model_type_clashes(profiles, docs))
    if not problems and not profiles:
        problems.append(Problem(str(root), 1, 1, "load", "profile.none", Severity.ERROR,
                                f"{root} holds no op profile (*.yaml); add the families' profiles, or remove "
                                "the folder to use the ones bundled with modelspec"))
    if problems:
        raise OpProfileError(problems)
    return OpProfiles(root, dict(sorted(profiles.items())))


def _as_profile_problem(problem: Problem) -> Problem:
    """Re-code a schema problem of a profile file as ``profile.invalid``."""
    return Problem(problem.file, problem.line, problem.column, problem.pass_name, "profile.invalid",
                   Severity.ERROR, problem.message, problem.path)


def _located(doc: "SourceDoc", path: FieldPath, code: str, message: str) -> Problem:
    """A profile problem at *path* of *doc*."""
    where = doc.locate(path)
    return Problem(doc.file, where.line, where.column, "schema", code, Severity.ERROR, message, path)


def _profile_rules(doc: "SourceDoc", path: Path) -> List[Problem]:
    """The rules the schema cannot state: arch is the file stem, default is a kind."""
    data = doc.data
    found = []
    if data["arch"] != path.stem:
        found.append(_located(doc, ("arch",), "profile.arch-stem",
                              f"arch is {data['arch']!r} but the file is {path.name}; write arch: {path.stem}"))
    default = data.get("default")
    if default is not None and default not in data["layer_kinds"]:
        found.append(_located(doc, ("default",), "profile.default-kind",
                              f"default {default!r} is not one of the layer_kinds {sorted(data['layer_kinds'])}"))
    return found


def _profile(data: Mapping, path: Path) -> OpProfile:
    """Build an :class:`OpProfile` from a checked document."""
    kinds = {
        name: LayerKind(name, OpCounts.from_dict(kind["ops"], ("layer_kinds", name, "ops")),
                        kind["attention"], kind["ffn"])
        for name, kind in data["layer_kinds"].items()
    }
    return OpProfile(data["arch"], data["summary"], data["source"], tuple(data["model_types"]),
                     tuple(data["match"]), data.get("default"), kinds, path)


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


def load_op_profiles(root: Optional[Path] = None) -> OpProfiles:
    """Return every profile of the folder *root* (default: the bundled ones), cached per folder.

    Raises:
        OpProfileError: If any profile of the folder is broken.
    """
    return _load_folder((root or bundled_profiles_dir()).resolve())


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
