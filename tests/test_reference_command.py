"""``modelspec reference`` without the reference extra, and the rest of modelspec never loading torch.

These run in every environment (no ``reference`` marker): each starts a
fresh interpreter, so what it imports is what the command imports.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "tests" / "data" / "configs" / "llama-3.1-8b.json"


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)


def test_check_help_and_reference_help_import_no_torch() -> None:
    result = _python(
        "import sys\n"
        "from pipeline.cli import main\n"
        "for args in (['check', '--no-cache', '-q', 'specs/llama/llama-3.1-8b.yaml'], ['--help'],\n"
        "             ['reference', '--help']):\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit as end:\n"
        "        assert end.code in (0, None), (args, end.code)\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in ('torch', 'transformers')))\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[]"


def test_without_the_extra_the_command_says_how_to_install_it() -> None:
    result = _python(
        "import sys\n"
        "sys.modules['torch'] = None  # as if torch were not installed\n"
        "from pipeline.cli import main\n"
        f"main(['reference', {str(CONFIG)!r}])\n")
    assert result.returncode == 2
    assert result.stderr == (
        "modelspec: modelspec reference needs the reference extra (torch 2.13.0, transformers 5.24.0), which is not "
        "installed (import of torch halted; None in sys.modules): pip install 'modelspec-catalogue[reference]'\n")
