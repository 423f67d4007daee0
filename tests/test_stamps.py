"""What decides whether a cached answer holds (pipeline/cache/stamps.py), in-process and fast: the cache folder,
the racy window's boundary, the digests, and what tells modelspec's code, its schemas, the Python and a library's
build apart. Each assertion is an exact value or a change a rebuild would make (bench/mutate.py runs this file)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from pipeline.cache import snapshot, stamps
from pipeline.spec import resources

OLD_NS = 1_577_836_800 * 10**9  # 2020-01-01


def test_the_cache_folder_is_the_roots_unless_the_environment_moves_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODELSPEC_CACHE_DIR", raising=False)
    assert stamps.cache_folder(tmp_path) == tmp_path / ".modelspec_cache"
    monkeypatch.setenv("MODELSPEC_CACHE_DIR", str(tmp_path / "moved"))
    assert stamps.cache_folder(tmp_path) == tmp_path / "moved"
    monkeypatch.setenv("MODELSPEC_CACHE_DIR", "")  # set but empty: not moved
    assert stamps.cache_folder(tmp_path) == tmp_path / ".modelspec_cache"


@pytest.mark.parametrize("age, racy", [(2_000_000_000, False), (1_999_999_999, True), (0, True)])
def test_a_stat_is_racy_within_two_seconds_of_now_and_settled_at_two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     age: int, racy: bool) -> None:
    spec = tmp_path / "a.yaml"
    spec.write_text("name: a\n", encoding="utf-8")
    os.utime(spec, ns=(OLD_NS, OLD_NS))
    monkeypatch.setattr(stamps, "clock", lambda: OLD_NS + age)
    status = os.stat(spec)
    assert snapshot.take([str(spec)]) == (None if racy else f"{spec}\t{stamps.stat_text(status)}")
    assert snapshot.recorded(status, OLD_NS + age) == (stamps.RACY if racy else stamps.stat_text(status))
    assert stamps.RACY == "?"


def test_the_stat_text_is_size_mtime_inode_ctime(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    status = os.stat(path)
    assert stamps.stat_text(status) == f"5:{status.st_mtime_ns}:{status.st_ino}:{status.st_ctime_ns}"


def test_the_digests_are_sha256_and_blake2b_128() -> None:
    assert stamps.content_digest(b"abc") == hashlib.sha256(b"abc").hexdigest()
    assert stamps.fingerprint(b"abc") == hashlib.blake2b(b"abc", digest_size=16).hexdigest()
    assert stamps.fingerprint(memoryview(b"abc")) == stamps.fingerprint(b"abc")


def test_a_folder_digest_tells_a_renamed_file_and_is_computed_once(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    for folder, name in ((first, "a.json"), (second, "b.json")):
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / name).write_text("{}", encoding="utf-8")
    assert stamps._folder_digest(first, "*.json") != stamps._folder_digest(second, "*.json")  # same bytes
    before = stamps._folder_digest.cache_info().hits
    stamps._folder_digest(first, "*.json")
    assert stamps._folder_digest.cache_info().hits == before + 1


def _package(root: Path) -> Path:
    package = root / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "sub" / "mod.py").write_text("x = 1\n", encoding="utf-8")
    (package / "__pycache__").mkdir()
    return package


def _identity(package: Path) -> str:
    return stamps._code_identity.__wrapped__(str(package))


def test_the_code_identity_changes_with_any_module_even_in_a_subfolder(tmp_path: Path) -> None:
    package = _package(tmp_path)
    before = _identity(package)
    (package / "notes.txt").write_text("not code", encoding="utf-8")
    (package / "__pycache__" / "mod.cpython.pyc").write_bytes(b"bytecode comes and goes")
    (package / "__pycache__" / "stray.py").write_text("", encoding="utf-8")
    assert _identity(package) == before  # neither a non-module nor bytecode's folder counts
    (package / "sub" / "mod.py").write_text("x = 22\n", encoding="utf-8")
    assert _identity(package) != before
    moved = _identity(package)
    (package / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "other.py").write_text("", encoding="utf-8")
    assert _identity(package) == moved  # a link to a folder is not walked (no loop, no foreign code)


def test_the_code_identity_takes_a_module_name_that_is_not_utf8(tmp_path: Path) -> None:
    package = _package(tmp_path)
    before = _identity(package)
    (package / os.fsdecode(b"\xff.py")).write_text("", encoding="utf-8")
    assert _identity(package) != before


def test_the_environment_changes_with_the_schemas_and_the_python(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    (schemas / "model.json").write_text("{}", encoding="utf-8")
    (schemas / "notes.txt").write_text("a", encoding="utf-8")
    monkeypatch.setattr(resources, "data_dir", lambda name: schemas if name == "schemas" else pytest.fail(name))
    before = stamps.environment_digest()
    (schemas / "notes.txt").write_text("b", encoding="utf-8")  # not a schema
    stamps._folder_digest.cache_clear()
    assert stamps.environment_digest() == before
    (schemas / "model.json").write_text(json.dumps({"type": "object"}), encoding="utf-8")
    stamps._folder_digest.cache_clear()
    changed = stamps.environment_digest()
    assert changed != before
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert stamps.environment_digest() != changed


def test_an_installed_package_is_known_by_each_of_its_module_files(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "house2_fake_library"
    package.mkdir()
    for name in ("__init__.py", "_speed.so", "core.py", "README.txt"):
        (package / name).write_text(name, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))

    def identity(name: str) -> str:
        status = os.stat(package / name)
        return f"house2_fake_library {package / name} {status.st_size} {status.st_mtime_ns}"

    assert stamps._installed.__wrapped__("house2_fake_library") == "\n".join(
        identity(name) for name in ("__init__.py", "_speed.so", "core.py"))


def test_a_library_that_is_not_installed_is_known_by_its_name() -> None:
    assert stamps._installed.__wrapped__("house2_no_such_library") == "house2_no_such_library house2_no_such_library"
    assert stamps._installed.__wrapped__("house2_no_parent.child") == "house2_no_parent.child house2_no_parent.child"
    assert stamps._file_identity("/house2/none") == "/house2/none"


def test_modelspec_s_code_is_walked_once_a_process() -> None:
    stamps.environment_digest()
    before = stamps._code_identity.cache_info().hits
    stamps.environment_digest()
    assert stamps._code_identity.cache_info().hits == before + 1
