"""Where the package's own data lives: the JSON Schemas and the bundled op profiles.

The schemas and op profiles are edited at the repository's top level
(``schemas/``, ``op_profiles/``), and a built wheel maps them into the package
(``pipeline/data/schemas``, ``pipeline/data/op_profiles``; see
``pyproject.toml``). So the installed command finds them under ``data/``
in the package's folder, and a source checkout or an editable install finds them
one level up. Found by path rather than through
``importlib.resources``, because the folders are data, not importable packages.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # pipeline/, this module being pipeline/spec/resources.py


def data_dir(name: str) -> Path:
    """Return the folder *name* (``"schemas"`` or ``"op_profiles"``) of this installation.

    Raises:
        FileNotFoundError: If neither the installed nor the checkout location exists.
    """
    for candidate in (_PACKAGE / "data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"modelspec is installed without its {name}/ folder; reinstall it")


def schema_path(name: str) -> Path:
    """Return the path of the bundled JSON Schema *name*, e.g. ``"model-spec.schema.json"``."""
    return data_dir("schemas") / name


def bundled_profiles_dir() -> Path:
    """The op profiles that ship with modelspec."""
    return data_dir("op_profiles")
