"""Options and fixtures shared by the test modules.

``--update-golden`` rewrites the files under ``tests/golden/`` from the current
output instead of comparing against them; review the diff before committing.

The property-based tests draw the same examples on every run of the suite
(Hypothesis's ``derandomize``), so a CI run passes or fails on the code, not
on the draw; ``MODELSPEC_FUZZ`` (``bench/fuzz.py``) draws fresh ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, List

import pytest
from hypothesis import settings

import differential_table
from budget import FACTOR
from pipeline.cache import stamps
from pipeline.check import runner

settings.register_profile("modelspec", derandomize=FACTOR == 1)
settings.load_profile("modelspec")

#: Where golden files live: the exact bytes a renderer must produce.
GOLDEN_DIR = Path(__file__).parent / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--update-golden``."""
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/ files from the current output instead of comparing")


def pytest_terminal_summary(terminalreporter: "pytest.TerminalReporter") -> None:
    """Print the differential suite's table when the run judged any family (:mod:`differential_table`)."""
    reports = [report for key in ("passed", "failed") for report in terminalreporter.stats.get(key, ())]
    rows = differential_table.rows_of(reports)
    if rows:
        terminalreporter.write_sep("=", "differential suite against transformers (seed, variants: tests/test_reference.py)")
        for line in differential_table.table_lines(rows):
            terminalreporter.write_line(line)


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """The display of each file the passes run on, in order: a cache's misses (a hit runs none). The cache folder
    is the repository's own (``MODELSPEC_CACHE_DIR`` unset), where the tests look for it."""
    files: List[str] = []
    real = runner.check_document

    def counting(doc, profiles):
        files.append(doc.file)
        return real(doc, profiles)

    monkeypatch.setattr(runner, "check_document", counting)
    monkeypatch.delenv(stamps.CACHE_DIR_ENV, raising=False)
    return files


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """Return ``check(name, text)``: assert *text*, UTF-8 encoded, equals ``tests/golden/<name>`` byte for byte.

    Under ``--update-golden`` it writes the file instead.
    """
    update = request.config.getoption("--update-golden")

    def check(name: str, text: str) -> None:
        path = GOLDEN_DIR / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))
        assert path.exists(), f"no golden file {path}; run pytest --update-golden and review it"
        assert text == path.read_bytes().decode("utf-8"), f"{name} differs from its golden file"

    return check


@pytest.fixture
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """The cache's clock (:data:`pipeline.cache.stamps.clock`) stopped at the moment the test starts.

    A file the test writes has an mtime at or after that moment, so it stays racy (within ``RACY_NS``) for the
    whole test however slowly a loaded machine runs it, and a file aged to 2020 is never racy: no verdict of the
    cache depends on how many seconds the test took. A forked child (the snapshot's stat check) inherits it.
    """
    now = stamps.clock()
    monkeypatch.setattr(stamps, "clock", lambda: now)
    return stamps.clock


@pytest.fixture
def resolved(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """The display of each spec a run checks and resolves, in order (:meth:`pipeline.catalogue.regen._Builder.resolve`):
    the spy diff's and regen's fast paths are counted with."""
    from pipeline.catalogue import regen

    displays: List[str] = []
    real = regen._Builder.resolve

    def resolve(self, path, display: str):
        displays.append(display)
        return real(self, path, display)
    monkeypatch.setattr(regen._Builder, "resolve", resolve)
    return displays
