"""Headless Chromium from the system's packages, driven by Playwright.

Playwright's own browser downloads are never used: `executable_path` points at Debian's
`chromium` (`apt-get install chromium`; `.ci/run` installs it when missing). Playwright
over Selenium: one pip package with no separate driver binary to keep in step with the
browser, and auto-waiting locators keep the tests free of sleeps.
"""

from __future__ import annotations

import os
import shutil

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """`$GRAPHLAKE_CHROMIUM`, or the first Chromium on PATH."""
    given = os.environ.get("GRAPHLAKE_CHROMIUM")
    if given:
        return given if os.access(given, os.X_OK) else None
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def missing_reason() -> str | None:
    """Why browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    if find_chromium() is None:
        return (
            "no Chromium found (apt-get install chromium, or set GRAPHLAKE_CHROMIUM); "
            ".ci/run installs it"
        )
    return None


def launch(playwright):  # type: ignore[no-untyped-def]
    # --no-sandbox: CI containers run as root, where Chromium's sandbox refuses to start.
    return playwright.chromium.launch(
        executable_path=find_chromium(),
        headless=True,
        args=["--no-sandbox", "--disable-dev-shm-usage"],
    )
