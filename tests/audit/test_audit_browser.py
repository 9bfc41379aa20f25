"""The audit report in headless Chromium: every section renders, every figure decodes, nothing is fetched, and
the page prints. The report is a real audit of the workplace catalog with a scripted model (helpers/hybrid_fakes.py)."""
from __future__ import annotations

import re

import pytest
from helpers.hybrid_fakes import scripted_client
from helpers.paths import FIXTURES
from helpers.browser import CHROMIUM_ARGS

from course_utils.audit import Settings, render_html, run_audit
from course_utils.audit.render import SECTIONS
from course_utils.skills.paths import DATA_DIR, SKILLS_DIR

WORKPLACE = SKILLS_DIR / "workplace"
CLAUDE_SKILLS = FIXTURES / "claude_code_skills"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


@pytest.fixture
def report_page(tmp_path, local_client):
    settings = Settings(queries=DATA_DIR / "dev" / "trigger_dev.yaml", selectors=("model", "similarity"),
                        progress=False)
    report, figures = run_audit(WORKPLACE, settings, scripted_client(local_client))
    page = tmp_path / "audit.html"
    page.write_text(render_html(report, figures), encoding="utf-8")
    return page, report


def test_the_report_renders_and_prints_in_chromium(report_page, chromium, tmp_path):
    from playwright.sync_api import sync_playwright

    path, report = report_page
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda request: requests.append(request.url))
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            for key, title in SECTIONS:
                heading = page.locator(f"section#{key} > h2")
                assert heading.inner_text() == title and heading.is_visible()
            images = page.evaluate("[...document.images].map(i => [i.alt, i.complete && i.naturalWidth > 0])")
            assert len(images) == 4 and all(ok for _, ok in images), images  # listing, pairs, rates, histogram
            fixes = page.locator("#summary ol.fixes li")
            assert fixes.count() == len(report.summary)
            for link in fixes.locator("a").all():  # every fix points at a section of the page
                assert page.locator(link.get_attribute("href")).count() == 1
            pairs = page.locator("#pairs table.pairs-embedding tbody tr")
            assert pairs.count() == 10 and "Use when" in pairs.first.inner_text()
            assert page.locator("#pairs table.three-signals tbody tr").count() >= 10
            page.screenshot(path=str(tmp_path / "audit.png"), full_page=True)
            pdf = page.pdf(format="A4", print_background=True)
        finally:
            browser.close()
    assert [url for url in requests if not url.startswith(("file:", "data:"))] == []  # nothing fetched
    assert pdf.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page[^s]", pdf)) >= 3


def test_the_listing_section_shows_what_the_model_sees_in_chromium(chromium, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    pages = {}
    for harness in ("claude-code", "spec"):
        report, figures = run_audit(CLAUDE_SKILLS, Settings(harness=harness, pairs="lexical", progress=False))
        pages[harness] = tmp_path / f"{harness}.html"
        pages[harness].write_text(render_html(report, figures), encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(pages["claude-code"].as_uri())
            rows = page.locator("#listing table.listing tbody tr")
            assert rows.count() == 1 and rows.first.inner_text().split("\t")[:2] == ["deploy", "removed"]
            assert "no usage known" in page.locator("#listing p.order").inner_text()
            assert page.locator("#listing img").evaluate("i => i.complete && i.naturalWidth > 0")
            page.goto(pages["spec"].as_uri())
            note = page.locator("#listing p.no-listing")
            assert note.is_visible() and "sets no listing rule" in note.inner_text()
            assert page.locator("#listing img").count() == 0
        finally:
            browser.close()
