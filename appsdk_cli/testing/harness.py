"""Rendering a widget for a test: one host and one browser per session, a fresh browser context per widget.

    with Harness(app) as harness:
        widget = harness.render(Rendering(tool="list-books", arguments={"month": "June"}, theme="dark"))
        widget.texts(".title")

The host is host/'s HostServer, the same one `appsdk preview` and the workbench run on: each rendering is
one run on it (Run.shown), shown by the host page (`?run=ID&screenshot=1`, the page's chrome hidden) in
Chromium through Playwright, found as browser/chromium.py finds it ($APPSDK_CHROMIUM, else the
system's). So a test sees what `appsdk preview` shows, in any profile, theme, locale, mode and device.

Each rendering gets a browser context of its own, closed when the widget goes: its storage of every kind
(local and session storage, IndexedDB, Cache Storage, the origin's file system, cookies, service workers)
and its tab's history start empty by construction, whatever the browser's version. A page kept between
renderings and cleared through DevTools (Storage.clearDataForOrigin) was isolated only as far as that
call reached in the browser at hand (#36: Chromium 150 handed a rendering's sessionStorage, which belongs
to the tab, to the next one), and the tab's history grew with every rendering. A fresh context cost
0.55 s a rendering where the kept page cost 0.44 s (medians of 20, book-club's widget, on two cores
under a load of 11).

A rendering waits until the host page says the widget settled (it took its data and stopped resizing),
or until the widget reports an error: a widget that throws, is blocked by its CSP or never takes its
data is a `WidgetProblem`, whose text is the cause in one line, not a timeout.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from appsdk_cli.errors import AppsdkError
from appsdk_cli.host.place import SourcePlace
from appsdk_cli.testing.rendering import FIXED_TIME_ZONE, Rendering, WidgetProblem

if TYPE_CHECKING:
    from appsdk_cli.host.server import HostServer
    from appsdk_cli.host.session import PreviewSession
    from appsdk_cli.testing.app import App
    from appsdk_cli.testing.widget import RenderedWidget

SETTLE_TIMEOUT = 20.0
# A fixed instant for Date in every frame, so a widget that prints "today" looks the same on every run.
FIXED_TIME = "2026-01-15T12:00:00Z"
# Ready once settled, or as soon as the widget reports an error or a CSP block (no wait for the give-up).
_READY = """() => {
  const p = window.appsdkPreview;
  if (!p) return false;
  return p.settled || p.log.some((e) => (e.kind === "error" || e.kind === "csp") && e.level === "error");
}"""


@dataclass
class _Shown:
    """The browser context of one rendering, with its one page."""

    context: Any
    page: Any


class BrowserMissing(AppsdkError):
    """No Chromium or no Playwright here: rendered tests skip, saying what to install."""


def browser_requirements() -> str:
    """The Chromium to drive; BrowserMissing (one line naming what to install) when it or Playwright is not here."""
    from appsdk_cli.browser.chromium import screenshot_requirements

    try:
        return screenshot_requirements()
    except AppsdkError as missing:
        raise BrowserMissing(str(missing).replace("--screenshot needs", "rendered widget tests need")) from None


class Harness:
    """A host and a browser for a test session; `render` gives one RenderedWidget per call."""

    def __init__(self, app: App) -> None:
        self.app = app
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._host: HostServer | None = None
        self._playwright: Any = None
        self._browser: Any = None
        self._comparator: Any = None
        self._thread: Any = None
        self._in_use: dict[str, _Shown] = {}  # by run id

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the session's host and browser, started on first use ----------------------------------------

    @property
    def host(self) -> HostServer:
        if self._host is None:
            from appsdk_cli.host.server import HostServer
            from appsdk_cli.host.session import PreviewOptions

            server = self.app.target.url or self.app.target.description
            self._host = HostServer(PreviewOptions(time_zone=FIXED_TIME_ZONE), server=server).start()
        return self._host

    @property
    def browser(self) -> Any:
        """Chromium, on a thread of its own (browser/thread.py says why)."""
        if self._browser is None:
            chromium = browser_requirements()
            from appsdk_cli.browser.chromium import launch_options, this_process_sandbox
            from appsdk_cli.browser.thread import BrowserThread, start_playwright

            self._thread = BrowserThread()
            self._playwright = start_playwright(self._thread)
            self._browser = self._playwright.chromium.launch(**launch_options(chromium, this_process_sandbox()))
        return self._browser

    def comparator(self) -> Any:
        """A blank page of the session's browser, where snapshots are decoded and compared (snapshots.py)."""
        if self._comparator is None:
            self._comparator = self.browser.new_page()
        return self._comparator

    def close(self) -> None:
        self._in_use.clear()
        if self._browser is not None:
            self._browser.close()
            self._browser = None
        if self._playwright is not None:
            self._playwright.stop()
            self._playwright = None
        if self._thread is not None:
            self._thread.close()
            self._thread = None
        if self._host is not None:
            self._host.close()
            self._host = None

    # --- one rendering ---------------------------------------------------------------------------------

    def session_for(self, rendering: Rendering) -> PreviewSession:
        """What the host shows: the tool called now (or the data given), its widget template, its tools."""
        from appsdk_cli.appmeta import tool_meta, without_tool_crash
        from appsdk_cli.host.session import PreviewSession, template_warnings, widget_tools
        from appsdk_cli.remote import request_meta

        definition = self.app.tool(rendering.tool)
        meta = tool_meta(definition)
        if not meta.template:
            raise AppsdkError(
                f"{rendering.tool} declares no widget (no _meta.ui.resourceUri or openai/outputTemplate);"
                " call it with app.call_tool() instead"
            )
        if rendering.call:
            result = self.app.call_tool(rendering.tool, rendering.arguments, meta=request_meta(locale=rendering.locale))
        else:
            result = {"content": list(rendering.content or [])}
            if rendering.structured_content is not None:
                result["structuredContent"] = rendering.structured_content
            if rendering.meta is not None:
                result["_meta"] = rendering.meta
        template = self.app.template(meta.template)
        tools = self.app.tools()
        return PreviewSession(
            target=self.app.target,
            tool=meta,
            arguments=dict(rendering.arguments),
            result=without_tool_crash(result),
            template=template,
            widget_tools=widget_tools(tools),
            warnings=template_warnings(template),
            tool_definition=definition,
            tools=tools,
        )

    def render(self, rendering: Rendering, **widget_options: Any) -> RenderedWidget:
        from appsdk_cli.host.profiles import DEVICES
        from appsdk_cli.host.run import Run
        from appsdk_cli.testing.widget import RenderedWidget

        _check_choices(rendering)
        session = self.session_for(rendering)
        browser = self.browser
        with self._lock:
            run_id = f"test-{next(self._ids)}"
        self.host.add_run(Run.shown(run_id, session))
        shown = self._new_page(browser, rendering)
        with self._lock:
            self._in_use[run_id] = shown
        context, page = shown.context, shown.page
        page.set_viewport_size(dict(DEVICES[rendering.device].viewport))
        page.emulate_media(color_scheme=rendering.theme, reduced_motion="reduce")
        page.clock.set_fixed_time(FIXED_TIME)
        url = self.host.page_url(
            screenshot=True,
            run=run_id,
            profile=rendering.profile,
            theme=rendering.theme,
            displayMode=rendering.display_mode,
            locale=rendering.locale,
            device=rendering.device,
            tz=rendering.time_zone,
        )
        place = SourcePlace.of(self.host.origins.view_origin, session.template.uri, session.template.html)
        widget = RenderedWidget(self, rendering, run_id, context, page, place=place, **widget_options)
        settled = False
        try:
            page.goto(url)
            page.wait_for_function(_READY, timeout=SETTLE_TIMEOUT * 1000)
            settled = True
        except Exception as problem:
            if type(problem).__name__ != "TimeoutError":
                self.release(widget)
                raise
        if not settled:
            self.release(widget)
            raise WidgetProblem(f"{rendering.label()}: the host page did not settle within {SETTLE_TIMEOUT:g} s")
        if not rendering.allow_problems:
            causes = widget.problems()
            if causes:
                self.release(widget)
                more = f" (and {len(causes) - 1} more: {'; '.join(causes[1:])})" if len(causes) > 1 else ""
                raise WidgetProblem(f"{rendering.label()}: {causes[0]}{more}")
        return widget

    def _new_page(self, browser: Any, rendering: Rendering) -> _Shown:
        """The one page of a new browser context in the rendering's locale and time zone."""
        context = browser.new_context(
            device_scale_factor=1,
            locale=rendering.locale,
            timezone_id=rendering.time_zone,
            reduced_motion="reduce",
        )
        context.set_default_timeout(SETTLE_TIMEOUT * 1000)
        return _Shown(context, context.new_page())

    def release(self, widget: RenderedWidget) -> None:
        """The widget's run goes, and its browser context with everything it stored."""
        with self._lock:
            shown = self._in_use.pop(widget.run_id, None)
        try:
            if shown is not None:
                shown.context.close()
        finally:
            self.forget(widget.run_id)

    def forget(self, run_id: str) -> None:
        if self._host is not None:
            self._host.drop_run(run_id)


def _check_choices(rendering: Rendering) -> None:
    from appsdk_cli.host.profiles import DEVICES, PROFILES
    from appsdk_cli.host.session import DISPLAY_MODES, THEMES

    for what, value, choices in (
        ("profile", rendering.profile, tuple(PROFILES)),
        ("theme", rendering.theme, THEMES),
        ("display mode", rendering.display_mode, DISPLAY_MODES),
        ("device", rendering.device, tuple(DEVICES)),
    ):
        if value not in choices:
            raise AppsdkError(f"unknown {what} {value!r}; one of {', '.join(choices)}")
