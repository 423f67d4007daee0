"""``modelspec reference``: a config, or a catalogue spec, judged against transformers tensor by tensor.

The reference (transformers 5.24.0 on torch 2.13.0, the ``reference`` extra)
builds the config on the meta device (:mod:`pipeline.reference.census`) and the
judge (:mod:`pipeline.pricing.judge`) compares its parameters with what ``modelspec
import`` of the same config gives. ``--spec NAME`` judges a catalogue spec
file, as it stands, against the config it was imported from, stored as
``configs/NAME.json`` at the repository's root. torch is imported only when
the command runs, so the rest of modelspec never loads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Tuple

import click

from pipeline.commands.options import root_option, run_profiles
from pipeline.commands.output import echo

INSTALL = "pip install 'modelspec-catalogue[reference]'"


@click.command(name="reference", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("config", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--spec", "spec_name", metavar="NAME",
              help="Judge the catalogue spec NAME against its stored source config, configs/NAME.json.")
@click.option("--arch", help="As for modelspec import: the op profile for a config whose model_type no profile "
                             "lists.")
@click.option("--allow-unknown", is_flag=True,
              help="As for modelspec import: import a config with keys the importer does not know, listing them as "
                   "warnings, and judge what it counts.")
@click.option("--draft", "draft_type", metavar="MODEL_TYPE",
              help="Write a draft op profile for MODEL_TYPE (a family no profile prices) to standard output, from "
                   "CONFIG when given, else from its config class's defaults.")
@root_option
def command(config: Optional[Path], spec_name: Optional[str], arch: Optional[str], allow_unknown: bool,
            draft_type: Optional[str], root: Optional[Path]) -> None:
    """Compare a config's weight inventories with transformers', tensor by tensor.

    transformers 5.24.0 builds CONFIG on the meta device (no weights, no
    download) and every parameter it holds is compared with what `modelspec
    import CONFIG` and the family's weight inventories give: names, shapes,
    parts, and the counts (total, active, embedding, head, layers, each
    layer group, routed experts, the vision tower, the rest). transformers
    builds no MTP layer: the body is compared, MTP is counted apart.

    --spec NAME judges the catalogue spec NAME, as its file states it,
    against configs/NAME.json, the config it was imported from.

    --draft MODEL_TYPE writes a draft op profile for a family the catalogue
    does not price: the config class's keys (mapped, ignored, to decide),
    each layer kind's tensors with every dimension solved as an expression
    over spec fields (from builds with the widths drawn anew; a dimension no
    expression explains is a question), the model's own tensors, and each
    kind's ops from one forward on the meta device, with the module that
    issued each. Its draft key lists the open questions; an op profile still
    holding it is refused (profile.draft).

    Needs the reference extra: pip install 'modelspec-catalogue[reference]'
    (torch 2.13.0, CPU, and transformers 5.24.0).

    \b
    Examples:
      modelspec reference config.json
      modelspec reference --spec deepseek-v3
      modelspec reference my-finetune.json --arch llama
      modelspec reference resaved-config.json --allow-unknown
      modelspec reference --draft olmo3 > op_profiles/olmo3.yaml

    Exit codes: 0 equal to the reference (one line with the total); 1 it
    differs (a table of the tensors and counts that differ), transformers
    cannot build the config, or modelspec import refuses it (its reasons are
    shown); 2 usage error, no stored config for --spec, a broken op profile,
    or the reference extra is not installed.
    """
    if draft_type is None and (config is None) == (spec_name is None):
        raise click.UsageError("name a CONFIG file or --spec NAME (one of them)")
    if draft_type is not None and (spec_name is not None or arch is not None):
        raise click.UsageError("--draft takes a MODEL_TYPE and, optionally, a CONFIG file; not --spec or --arch")
    try:
        from pipeline.reference import census as reference
    except ImportError as error:
        echo(f"modelspec: modelspec reference needs the reference extra (torch 2.13.0, transformers 5.24.0), "
             f"which is not installed ({error}): {INSTALL}", err=True)
        raise SystemExit(2) from None
    if draft_type is not None:
        _draft(draft_type, config)
        return
    from pipeline.pricing.judge import judge, render, summary
    from pipeline.spec.model import ModelSpecError
    from pipeline.check.repo import find_repo
    from pipeline.pricing.weights import Unpriced

    repo = find_repo(root)
    profiles = run_profiles(repo)
    if arch is not None and arch not in profiles.profiles:
        raise click.BadParameter(f"{arch!r} names no op profile; the profiles are "
                                 f"{', '.join(sorted(profiles.profiles))}", param_hint="--arch")
    if spec_name is not None:
        spec, data, what = _catalogue_spec(repo, profiles, spec_name)
    else:
        data, what = _config(config), repo.report_name(config)
        spec = _imported(data, what, profiles, arch, config.stem, allow_unknown)
    try:
        census = reference.census(data, _model_type(profiles, arch))
    except reference.BuildError as error:
        _fail(f"{what}: the reference cannot build it: {error}")
    try:
        verdict = judge(spec, profiles, census)
    except (ModelSpecError, Unpriced) as error:
        _fail(f"{what}: modelspec cannot count it: {error}")
    if verdict.equal:
        echo(summary(verdict, what))
        return
    echo(render(verdict, what), nl=False)
    raise SystemExit(1)


def _draft(model_type: str, config: Optional[Path]) -> None:
    """Print the draft op profile of *model_type* (exit 1 when transformers cannot build it)."""
    from pipeline.reference.draft import DraftError, draft, render

    data = _config(config) if config is not None else None
    try:
        echo(render(draft(model_type, data)), nl=False)
    except DraftError as error:
        _fail(f"--draft {model_type}: {error}")


def _config(path: Path) -> Any:
    """The parsed config at *path*, read as ``modelspec import`` reads it (exit 1 on a located refusal)."""
    from pipeline.commands.import_ import ConfigReadError, read_config, read_config_file

    try:
        return read_config(read_config_file(path))[0]
    except ConfigReadError as error:
        _fail(f"{path}:{error.where.line}:{error.where.column}: error [import.json] {error}")


def _imported(data: Any, what: str, profiles: Any, arch: Optional[str], fallback: str, allow_unknown: bool) -> Any:
    """The spec ``modelspec import`` makes of *data*; its refusals shown (exit 1), and with *allow_unknown* the
    keys it does not know as warnings."""
    from pipeline.importer.config_json import ConfigImportError, import_config

    try:
        imported = import_config(data, profiles, fallback_name=fallback, arch=arch, allow_unknown=allow_unknown)
    except ConfigImportError as error:
        for issue in error.issues:
            key = ".".join(map(str, issue.path)) or "the config"
            echo(f"{what}: {key}: error [{issue.code}] {issue.message}", err=True)
        _fail(f"{what}: modelspec import refuses it, so there is nothing to compare")
    for path in imported.unknown:
        echo(f"{what}: {'.'.join(map(str, path))}: warning [import.unknown-key] not imported: the importer does not "
             "know it", err=True)
    return imported.spec


def _model_type(profiles: Any, arch: Optional[str]) -> Optional[str]:
    """The transformers model type --arch reads a config as: the first its profile prices."""
    return profiles.get(arch).model_types[0] if arch else None


def _catalogue_spec(repo: Any, profiles: Any, name: str) -> Tuple[Any, Any, str]:
    """``(spec, stored config, display)`` of the catalogue spec *name*; exit 1 when it fails its check."""
    from pipeline.catalogue.views import CatalogueError, find
    from pipeline.commands.show import entries
    from pipeline.commands.options import walk_catalogue
    from pipeline.spec.problems import Severity
    from pipeline.check.runner import check_file

    walked = walk_catalogue(repo, True)
    try:
        entry = find(entries(walked.files, repo.displays, walked.cache), name)
    except CatalogueError as error:
        raise click.BadParameter(str(error), param_hint="--spec") from None
    stored = repo.root / "configs" / f"{entry.name}.json"
    if not stored.is_file():
        raise click.BadParameter(f"no stored source config for {entry.name}: {repo.report_name(stored)} does not "
                                 "exist; store the config.json it was imported from there", param_hint="--spec")
    checked = check_file(Path(entry.path), entry.file, profiles)
    if checked.stack is None or any(p.severity is Severity.ERROR for p in checked.result.problems):
        _fail(f"{entry.file} fails its check (run modelspec check {entry.file}); fix it to compare it")
    return checked.spec, _config(stored), f"{entry.name} ({entry.file} against {repo.report_name(stored)})"


def _fail(message: str) -> None:
    echo(f"modelspec: {message}", err=True)
    raise SystemExit(1)
