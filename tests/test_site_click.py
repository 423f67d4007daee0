"""One real click on the site's index: a column header clicked in Chromium re-sorts the table, and again reverses it.

Playwright's Python package drives the Chromium the other browser tests use
(:data:`browser.CHROMIUM`, Debian's ``/usr/bin/chromium``) through
``executable_path``: no browser is downloaded. The click goes through the
page's own script (``site.js``), as a reader's would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest

from browser import CHROMIUM, FLAGS, SKIP_REASON
from spec_repos import run_in

ROOT = Path(__file__).resolve().parent.parent

playwright = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package (the test extra)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)


def _totals() -> dict:
    return {path.stem: json.loads(path.read_text(encoding="utf-8"))["parameters"].get("total", -1)
            for path in (ROOT / "resolved").glob("*.json") if path.name != "index.json"}


def _names(page) -> List[str]:
    return page.eval_on_selector_all("#models tbody tr", "rows => rows.map(row => row.dataset.name)")


def test_a_click_on_a_column_header_re_sorts_the_table(tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert run_in(ROOT, ["site", "--out", str(site)])[0] == 0
    totals = _totals()
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=[flag for flag in FLAGS
                                                                         if flag != "--headless"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto((site / "index.html").as_uri())
        before = _names(page)
        assert before == sorted(before)  # name order until a header is clicked
        page.click("th[data-key=total]")
        descending = _names(page)
        assert [totals[name] for name in descending] == sorted(totals.values(), reverse=True)
        assert page.get_attribute("th[data-key=total]", "aria-sort") == "descending"
        page.screenshot(path=str(tmp_path / "sorted.png"))
        page.click("th[data-key=total]")
        assert [totals[name] for name in _names(page)] == sorted(totals.values())
        assert page.get_attribute("th[data-key=total]", "aria-sort") == "ascending"
        browser.close()
