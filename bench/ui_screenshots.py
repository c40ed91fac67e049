"""PNG screenshots of the web UI's history and merge-preview pages, for the README.

    .venv/bin/python bench/ui_screenshots.py            # writes docs/ui-*.png

Uses the browser tests' harness (tests/ui): the same seeded graph with a conflict between
`main` and `feature`, a real `graphlake serve`, and Debian's headless Chromium through
Playwright. It previews merging `wide` into `main` (a conflict of long values and a
Vector(128), at the 1400 px width the preview must fit), merges `clean` and then
`feature` (strategy theirs) through the UI, and shows `main`'s history with both
merges. Prints each page's load time (wall seconds, one run: a smoke figure).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.ui.browser import launch, missing_reason  # noqa: E402
from tests.ui.harness import WRITE_TOKEN, start_server  # noqa: E402

VIEWPORT = {"width": 1400, "height": 640}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    reason = missing_reason()
    if reason:
        print(f"cannot take screenshots: {reason}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="graphlake-ui-shots-") as tmp:
        server = start_server(Path(tmp), wide=True)
        try:
            with sync_playwright() as p:
                browser = launch(p)
                page = browser.new_context(
                    base_url=server.url, viewport=VIEWPORT, device_scale_factor=1
                ).new_page()
                page.goto("/ui/login")
                page.fill("input[name=token]", WRITE_TOKEN)
                page.click("button[type=submit]")
                page.wait_for_url("**/ui/branches")

                timed(page, "/ui/merge?source=wide&into=main")
                width = page.evaluate("document.documentElement.scrollWidth")
                print(f"merge preview scroll width {width} px (window {VIEWPORT['width']})")
                shot(page, args.out / "ui-merge-preview.png")

                for source, strategy in (("clean", ""), ("feature", "theirs")):
                    timed(page, f"/ui/merge?source={source}&into=main")
                    page.check(f"input[name=strategy][value='{strategy}']")
                    page.click("#merge-button")
                    page.wait_for_url("**/ui/commit/**")
                timed(page, "/ui/history?ref=main")
                shot(page, args.out / "ui-history.png")
                for url in (
                    "/ui/branches",
                    "/ui/diff?a=main~2&b=main",
                    "/ui/browse?table=Person",
                    "/ui/node?table=Person&id=Alice",
                ):
                    timed(page, url)
                browser.close()
        finally:
            server.stop()
    return 0


def timed(page, url: str) -> None:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    page.goto(url)
    print(f"{url:45} {time.perf_counter() - start:6.3f} s")


def shot(page, path: Path) -> None:  # type: ignore[no-untyped-def]
    page.screenshot(path=str(path), full_page=True)
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    sys.exit(main())
