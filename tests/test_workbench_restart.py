"""`appsdk dev` stopped and started again with a workbench tab open: the same port, and the tab follows.

The tab's open stream is closed by the server, so the port sits in TIME_WAIT when dev starts again; the
workbench must still get its usual port (the tab's URL), and the tab must say dev stopped, then reconnect.
"""

from __future__ import annotations

import signal
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import stop
from preview_helpers import NEEDS_CHROMIUM
from test_workbench_browser import dev_workbench_url, open_workbench, start_dev

from appsdk_cli.errors import AppsdkError
from appsdk_cli.host.server import HostServer
from appsdk_cli.scaffold import scaffold

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")
pytestmark = NEEDS_CHROMIUM


def test_a_restarted_dev_keeps_the_workbench_port_and_the_open_tab_follows_it(page, tmp_path: Path) -> None:
    project = scaffold("book-club", tmp_path).path
    first = start_dev(project)
    second = None
    try:
        url = dev_workbench_url(first, [])
        open_workbench(page, url)
        page.wait_for_function("() => window.appsdkWorkbench.connection === 'live'")
        assert page.locator("#connection-banner").is_hidden()

        first.send_signal(signal.SIGINT)  # Ctrl-C
        assert first.wait(timeout=30) == 0
        page.wait_for_function("() => window.appsdkWorkbench.stopped === true", timeout=15_000)
        banner = page.locator("#connection-banner")
        assert banner.is_visible()
        assert "appsdk dev has stopped" in banner.text_content()

        second = start_dev(project)
        lines: list[str] = []
        assert dev_workbench_url(second, lines) == url, "".join(lines)
        assert not any("was busy" in line for line in lines), "".join(lines)
        # The tab reconnects by itself, to the new dev (a fresh page on the same URL), and the banner goes.
        page.wait_for_function(
            "() => window.appsdkWorkbench && window.appsdkWorkbench.ready"
            " && window.appsdkWorkbench.connection === 'live'",
            timeout=30_000,
        )
        assert page.locator("#connection-banner").is_hidden()
        assert page.url == url
        # Reusing the address is not sharing the port: another host on it, while dev serves, is refused.
        with pytest.raises(AppsdkError, match=r"cannot listen on 127\.0\.0\.1"):
            HostServer(port=urlsplit(url).port or 0).start()
    finally:
        stop(first)
        if second is not None:
            stop(second)
