"""The browser room: the one place appsdk drives Chromium, and the only package that imports Playwright.

    chromium.py     which Chromium (and what to install when there is none), whether Playwright is here,
                    the sandbox and the launch flags; the driver's compile cache
    capture.py      settle and capture: the host page until the widget settles, the widget's frame as an
                    image, the problems the page counted
    screenshot.py   one shot in a browser started and stopped for it (Ctrl-C stops the driver cleanly)
    kept.py         KeptBrowser: one Chromium kept in this process, owned by one thread (`appsdk mcp`)
    keptbrowser.py  the headless Chromium kept between `preview --screenshot` commands (a process of its own)
    thread.py       Playwright on a thread of its own, for the pytest plugin (testing/)

Playwright is imported inside the functions that drive it, so importing this package costs `--help` nothing.
"""
