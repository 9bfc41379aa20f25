"""Debian's Chromium for the browser tests: where it is, the flags this machine needs, and the fixture that
checks it is there (a missing browser skips a developer's run and fails CI's)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
# The flags this machine needs (see scripts/ensure_chromium.sh): no sandbox as root, no GPU, and no
# background connections, which the closed network would refuse. Playwright adds --headless itself.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic"]


def browser_available() -> bool:
    """Whether the browser tests run here: in CI always (a missing browser fails them), else if installed."""
    if os.environ.get("CI"):
        return True
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return CHROMIUM.exists()


def require(condition: bool, reason: str) -> None:
    """Skip on a developer's machine without the browser; in CI (env CI set) a missing browser fails."""
    if condition:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (in CI the browser tests must run, not skip)", pytrace=False)
    pytest.skip(f"{reason}; the browser tests are skipped without it")


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium and the playwright package, checked before any server starts."""
    require(CHROMIUM.exists(), f"needs Chromium at {CHROMIUM}: run `make test` (or `sudo apt-get install "
             "chromium`)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        require(False, "needs the playwright package: pip install -e '.[dev]' (make test does)")
    return CHROMIUM
