"""Headless Chromium for the live view's tests: Debian's `chromium` package driven by Playwright
from PyPI (`playwright install` is never run). One browser per test session, a fresh context per
test; each context refuses and records every request for a host other than this machine, and
collects the console's errors (a content security policy violation shows there)."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "ui"
CHROMIUM = os.environ.get("POINTWORK_CHROMIUM", "/usr/bin/chromium")
# --no-sandbox: CI runs as root. The rest keep Chromium's own calls home (this network is closed).
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def launch(playwright):
    """The browser, or a failure (CI) / skip (a developer's machine) when Chromium is missing."""
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        message = f"{CHROMIUM} is missing: scripts/test installs it (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)


@dataclass
class Browsing:
    """One context and its page, with what the guard refused and what the console complained of."""

    context: object
    page: object
    foreign: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    allowed: list[re.Pattern] = field(default_factory=list)

    def allow_console(self, pattern: str) -> None:
        """A console error the test expects (a 401 the page asked for, say)."""
        self.allowed.append(re.compile(pattern))

    def check(self) -> None:
        assert self.foreign == [], f"requests for another host: {self.foreign}"
        if not self.page.is_closed():
            text = self.page.evaluate("() => document.body.innerText")
            slips = [w for w in ("[object ", "undefined", "NaN") if w in text]
            assert slips == [], f"the page shows {slips}"
        unexpected = [e for e in self.errors if not any(p.search(e) for p in self.allowed)]
        assert unexpected == [], f"console errors: {unexpected}"

    def close(self) -> None:
        self.context.close()


def browse(browser, *, viewport=None, color_scheme: str = "light") -> Browsing:
    context = browser.new_context(viewport=viewport or LAPTOP, color_scheme=color_scheme)
    browsing = Browsing(context=context, page=None)

    def guard(route):
        url = route.request.url
        if urlsplit(url).hostname in LOCAL_HOSTS or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            browsing.foreign.append(url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.on("console", lambda m: browsing.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: browsing.errors.append(f"uncaught: {e}"))
    browsing.page = page
    return browsing


def screenshot(page, name: str) -> Path:
    """Writes docs/ui/NAME.png (the viewport only, to keep each file small)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), animations="disabled", caret="hide")
    return path
