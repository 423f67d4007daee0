"""A headless Chromium driven by its command line, for the site's tests: the DOM after the page's scripts ran,
and a screenshot.

Chromium is Debian's package (``apt-get install chromium``; ``.ci/run``
installs it), found on PATH or named by ``MODELSPEC_CHROMIUM``. Each run gets
a fresh profile folder and no network services (no sync, updates or QUIC), so
a page can only show what the site holds. :data:`SKIP_REASON` says why the
browser tests skip when there is none.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

#: Where Chromium is, or ``None``.
CHROMIUM: Optional[str] = os.environ.get("MODELSPEC_CHROMIUM") or next(
    filter(None, (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome"))), None)

#: Why the browser tests skip, when they do.
SKIP_REASON = ("no Chromium to run the site's browser tests: install Debian's package (apt-get install chromium, "
               "as .ci/run does) or name one with MODELSPEC_CHROMIUM")

#: The flags a headless run needs in a container, without the browser's own network traffic.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage")


def _run(url: str, *args: str) -> str:
    """Run Chromium on *url* with *args* and a fresh profile; return its stdout."""
    assert CHROMIUM is not None, SKIP_REASON
    with tempfile.TemporaryDirectory(prefix="modelspec-chromium-") as profile:
        done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, url], capture_output=True,
                              text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dump_dom(page: Path, fragment: str = "") -> str:
    """The DOM of *page* (a local file) as serialised after its scripts ran; *fragment* is the URL's ``#...``."""
    return _run(page.resolve().as_uri() + fragment, "--dump-dom")


def screenshot(page: Path, png: Path, width: int = 1200, height: int = 900) -> bytes:
    """A screenshot of *page* at *width* x *height* pixels, written to *png*; its bytes."""
    _run(page.resolve().as_uri(), f"--screenshot={png}", f"--window-size={width},{height}")
    return png.read_bytes()
