"""Playwright (the PyPI package's driver only) driving Debian's /usr/bin/chromium: its own browser download
cannot work on these machines. A fresh user-data-dir per test; the flags keep Chromium off the network."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing_browser() -> str | None:
    """None when the browser tests can run; else what to install."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    if shutil.which(CHROMIUM) is None:
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    return None


@contextmanager
def chromium_page(
    user_data_dir: Path, width: int = 1280, height: int = 900, timezone_id: str | None = None
) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(user_data_dir),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": width, "height": height},
            **({"timezone_id": timezone_id} if timezone_id else {}),
        )
        try:
            yield context.new_page()
        finally:
            context.close()
