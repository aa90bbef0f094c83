"""The browser room: the one place appsdk drives Chromium, and the only package that imports Playwright.

    screenshot.py   which Chromium, its sandbox and launch flags; settle and capture; one shot in this
                    process, or KeptBrowser for many (`appsdk mcp`)
    keptbrowser.py  the headless Chromium kept between `preview --screenshot` commands (a process of its own)
    thread.py       Playwright on a thread of its own, for the pytest plugin (testing/)

Playwright is imported inside the functions that drive it, so importing this package costs `--help` nothing.
"""
