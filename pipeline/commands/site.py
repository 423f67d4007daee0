"""``modelspec site``: write the catalogue's static web site, for a reviewer's browser and the nightly job.

The catalogue is resolved in-process as ``modelspec diff`` resolves a side
(:func:`pipeline.catalogue.diff.load_catalogue`: every spec checked and its
artifact built), not read from ``resolved/``: the site then shows the specs
as they are, even before ``regen`` ran, and needs no committed artifacts.
The pages are :mod:`pipeline.catalogue.site`'s. ``--diff BASE`` adds ``diff.html``,
the comparison ``modelspec diff BASE`` prints, drawn, with the same merge
base rule.

Exit codes: 0 written, 1 written but a spec does not resolve (it is listed
on the index), 2 a usage error, a folder that is not the site's, a git
failure or broken op profiles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional

import click

from pipeline.commands.output import echo

from pipeline.commands.git_options import git_errors
from pipeline.commands.options import root_option


class SiteFailure(click.ClickException):
    """The site folder cannot be written (not a folder, someone else's files, not writable); exit code 2."""

    exit_code = 2


@click.command(name="site", context_settings={"help_option_names": ["-h", "--help"]})
@root_option
@click.option("--out", "out", type=click.Path(path_type=Path), default=Path("_site"), show_default=True,
              help="The folder to write the site into: new, empty, or one modelspec site wrote before (only its "
                   "own files are replaced or removed).")
@click.option("--diff", "base", metavar="BASE", default=None,
              help="Also write diff.html: what the working tree changes since git revision BASE (its merge base "
                   "with HEAD), as modelspec diff BASE tells it, drawn.")
def command(root: Optional[Path], out: Path, base: Optional[str]) -> None:
    """Write the catalogue's static web site: an index, a page per model, and --diff's page.

    The index lists every model (family, total and active parameters,
    layers, experts, MTP, tower, context length), sortable and filterable in
    the browser. A model's page draws its layer stack (one band per layer,
    MTP marked, the vision tower beside it), its parameter breakdown as a bar
    and a table of exact counts, its op counts per kind, its spec's source
    header and a copy of its spec file. Self-contained (nothing fetched at
    view time), the same bytes for the same catalogue, each file written
    atomically.

    \b
    Examples:
      modelspec site                        # into _site/; open _site/index.html
      modelspec site --out /tmp/site --diff origin/main

    Exit codes: 0 written, 1 written but a spec does not resolve, 2 a usage
    error, a folder that is not the site's, a git failure or broken op profiles.
    """
    # pylint: disable=import-outside-toplevel
    from pipeline.commands.diff import _base_side, _catalogue, _working_tree
    from pipeline.catalogue.git import check_revision
    from pipeline.check.repo import find_repo
    from pipeline.catalogue.site import SiteError, build_site, write_site

    repo = find_repo(root)
    if not repo.specs.is_dir():
        raise click.UsageError(f"{repo.specs} is not a folder; site draws the specs under specs/ "
                               "(give the repository with --root)")
    catalogue = _working_tree(repo)
    diff = sides = None
    if base is not None:
        import tempfile

        from pipeline.catalogue.diff import diff_catalogues

        with git_errors():
            check_revision(base)
            commit, label = _base_side(repo, base, None, True)
        with tempfile.TemporaryDirectory(prefix="modelspec-site-") as scratch:
            before = _catalogue(repo, commit, label, Path(scratch) / "base")
        diff = diff_catalogues(before, catalogue)
        sides = (before, catalogue)
    texts: Dict[str, str] = {}
    for document in catalogue.models.values():
        try:
            texts[document["path"]] = (repo.root / document["path"]).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    files = build_site(catalogue, texts, diff, sides)
    try:
        written, removed = write_site(out, files)
    except SiteError as error:
        raise SiteFailure(str(error)) from None
    except OSError as error:
        raise SiteFailure(f"cannot write the site into {out}: {error.strerror or error}") from None
    for path, why in sorted(catalogue.failing.items()):
        echo(f"{path}: not on the site: {why}")
    echo(f"site: {len(catalogue.models)} models, {len(written)} files written, {len(removed)} removed, "
         f"{len(files) - len(written)} unchanged in {out}/; open {out / 'index.html'}")
    raise SystemExit(1 if catalogue.failing else 0)
