"""A rendered widget, as a test reads and drives it: text, elements, clicks, state, messages, log, images.

The widget's document is the view frame inside the sandbox proxy (`iframe#widget` → its one frame), on
an origin of its own, as in ChatGPT. Everything else a test reads comes from the host page's own account
(`window.appsdkPreview`: its log, its traffic between host and widget, the widget state it keeps), so a
test sees what the host saw, not what the widget claims.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from appsdk_cli.errors import AppsdkError
from appsdk_cli.safewrite import default_root, write_file

if TYPE_CHECKING:
    from appsdk_cli.host.place import SourcePlace
    from appsdk_cli.testing.rendering import Rendering
    from appsdk_cli.testing.snapshots import SnapshotPolicy

# What a widget's request to the host means, per channel and method.
_BRIDGE_KINDS = {
    "ui/message": "follow-up",
    "tools/call": "tool-call",
    "ui/open-link": "link",
    "ui/update-model-context": "model-context",
    "ui/request-display-mode": "display-mode",
}
_OPENAI_KINDS = {
    "sendFollowUpMessage": "follow-up",
    "callTool": "tool-call",
    "openExternal": "link",
    "setWidgetState": "widget-state",
    "requestDisplayMode": "display-mode",
}


@dataclass(frozen=True)
class Message:
    """One request the widget sent its host: a follow-up, a tool call, a link, model context, …"""

    kind: str  # follow-up, tool-call, link, model-context, widget-state, display-mode, or "other"
    method: str  # as sent: ui/message, tools/call, sendFollowUpMessage, callTool, …
    params: dict[str, Any]
    channel: str  # "bridge" (MCP Apps) or "openai" (window.openai)

    @property
    def text(self) -> str:
        """A follow-up's text (either API), else ""."""
        if "prompt" in self.params:
            return str(self.params["prompt"])
        content = self.params.get("content")
        blocks = content if isinstance(content, list) else [content] if isinstance(content, dict) else []
        return " ".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict)).strip()


@dataclass(frozen=True)
class LogLine:
    """One line of the host log: `kind` console, error, csp, openai, bridge or host; `level` info, warn, error."""

    kind: str
    level: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind} {self.level}: {self.message}"


class Element:
    """One element of the widget's document."""

    def __init__(self, locator: Any) -> None:
        self._locator = locator

    @property
    def text(self) -> str:
        return str(self._locator.inner_text()).strip()

    def attribute(self, name: str) -> str | None:
        return self._locator.get_attribute(name)

    @property
    def visible(self) -> bool:
        return bool(self._locator.is_visible())

    def click(self) -> None:
        self._locator.click()

    def fill(self, value: str) -> None:
        self._locator.fill(value)

    def __repr__(self) -> str:
        return f"<Element {self.text[:40]!r}>"


class RenderedWidget:
    """The widget of one rendering, live in its own browser context until the test ends."""

    def __init__(
        self,
        harness: Any,  # testing.harness.Harness (it imports this module)
        rendering: Rendering,
        run_id: str,
        context: Any,
        page: Any,
        *,
        snapshots: SnapshotPolicy | None = None,
        place: SourcePlace | None = None,
    ) -> None:
        self.rendering = rendering
        self.run_id = run_id
        self._context = context
        self._page = page
        self._harness = harness
        self._snapshots = snapshots
        self._place = place
        self._frame: Any = None

    @property
    def context(self) -> Any:
        """Playwright's BrowserContext, for what this class does not cover (it serves this widget only)."""
        return self._context

    @property
    def page(self) -> Any:
        """Playwright's Page of the host page, for what this class does not cover (as `context`)."""
        return self._page

    # --- the widget's document ---------------------------------------------------------------------------

    @property
    def frame(self) -> Any:
        """Playwright's Frame of the widget's own document (inside the host's sandbox proxy)."""
        if self._frame is None or self._frame.is_detached():
            self._frame = _view_frame(self._page)
        return self._frame

    @property
    def text(self) -> str:
        """The widget's visible text."""
        return str(self.frame.locator("body").inner_text())

    def query(self, selector: str) -> list[Element]:
        """Every element matching a CSS selector (or Playwright's `text=…`), in document order."""
        found = self.frame.locator(selector)
        return [Element(found.nth(index)) for index in range(found.count())]

    def element(self, selector: str) -> Element:
        """The one element matching `selector`; an AssertionError naming the selector when there is none."""
        found = self.query(selector)
        if not found:
            raise AssertionError(f"the widget has no element matching {selector!r}; its text: {self.text[:200]!r}")
        return found[0]

    def texts(self, selector: str) -> list[str]:
        """The text of each element matching `selector`."""
        return [str(t).strip() for t in self.frame.locator(selector).all_inner_texts()]

    def click(self, selector: str | None = None, *, text: str | None = None) -> None:
        """Click the element matching `selector`, or the one showing `text`."""
        if (selector is None) == (text is None):
            raise ValueError("click(selector) or click(text=...), one of them")
        target = self.frame.get_by_text(text).first if text is not None else self.frame.locator(selector).first
        target.click()

    def fill(self, selector: str, value: str) -> None:
        self.frame.locator(selector).first.fill(value)

    # --- what the host saw -------------------------------------------------------------------------------

    def _preview(self, expression: str) -> Any:
        return self._page.evaluate(f"async () => {{ const p = window.appsdkPreview; return {expression}; }}")

    @property
    def state(self) -> Any:
        """The widget state the host keeps for this widget (window.openai.setWidgetState / the bridge's)."""
        return self._preview("await p.getWidgetState()")

    @property
    def log(self) -> list[LogLine]:
        """The host log: what the widget printed, its errors, CSP blocks, and each request it made."""
        entries = self._preview("p.log") or []
        return [LogLine(str(e.get("kind")), str(e.get("level")), str(e.get("message"))) for e in entries]

    @property
    def errors(self) -> list[LogLine]:
        return [line for line in self.log if line.level == "error"]

    @property
    def csp_violations(self) -> list[LogLine]:
        return [line for line in self.log if line.kind == "csp" and line.level == "error"]

    def problems(self) -> list[str]:
        """Why the widget is broken, the root cause first (empty when it rendered and took its data)."""
        from appsdk_cli.testing.rendering import widget_causes

        found = self._preview("{ problems: p.problems(), log: p.log }")
        causes = widget_causes(list(found["problems"]), list(found["log"]))
        return [self._place.place(c) for c in causes] if self._place is not None else causes

    @property
    def messages(self) -> list[Message]:
        """Every request the widget sent its host, in order, over either API."""
        records = self._preview("p.traffic") or []
        sent = []
        for record in records:
            message = record.get("message")
            if record.get("from") != "widget" or record.get("kind") not in ("request", "notification"):
                continue
            if not isinstance(message, dict):
                continue
            method = str(record.get("method") or "")
            channel = str(record.get("channel"))
            kinds = _BRIDGE_KINDS if channel == "bridge" else _OPENAI_KINDS
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            if channel == "bridge" and method.startswith(("ui/notifications/", "notifications/")):
                continue  # the bridge's own housekeeping (initialized, size-changed)
            if method == "ui/initialize":
                continue
            sent.append(Message(kinds.get(method, "other"), method, params, channel))
        return sent

    def _of(self, kind: str) -> list[Message]:
        return [m for m in self.messages if m.kind == kind]

    @property
    def follow_ups(self) -> list[Message]:
        return self._of("follow-up")

    @property
    def tool_calls(self) -> list[Message]:
        return self._of("tool-call")

    @property
    def links(self) -> list[Message]:
        return self._of("link")

    @property
    def model_context(self) -> list[Message]:
        return self._of("model-context")

    def wait_for_message(self, kind: str, *, timeout: float = 5.0) -> Message:
        """The first message of this kind, waiting for it (after a click, say)."""
        deadline = time.monotonic() + timeout
        while True:
            found = self._of(kind)
            if found:
                return found[0]
            if time.monotonic() > deadline:
                sent = ", ".join(m.method for m in self.messages) or "nothing"
                raise AssertionError(f"the widget sent no {kind} message within {timeout:g} s (it sent: {sent})")
            self._page.wait_for_timeout(30)

    def wait_for(self, condition: Any, *, timeout: float = 5.0, what: str = "the condition") -> None:
        """Wait until `condition()` is true (after a click, say); an AssertionError naming `what` if it never is."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} did not come true within {timeout:g} s")
            self._page.wait_for_timeout(30)

    # --- the host's controls -------------------------------------------------------------------------------

    def set_theme(self, theme: str) -> None:
        self._preview(f"await p.setTheme({theme!r})")
        self._page.wait_for_timeout(50)

    def set_display_mode(self, mode: str) -> None:
        self._preview(f"await p.setDisplayMode({mode!r})")
        self._page.wait_for_timeout(50)

    # --- images ---------------------------------------------------------------------------------------

    def screenshot(self, path: str | Path | None = None) -> bytes:
        """A PNG of the widget's frame, as the host shows it (animations stopped, no caret)."""
        data = self._page.locator("#widget").screenshot(animations="disabled", caret="hide", type="png")
        if path is not None:
            write_file(Path(path), data, root=default_root(Path(path)))
        return bytes(data)

    def assert_snapshot(
        self, name: str | None = None, *, threshold: float = 0.1, max_diff_ratio: float = 0.002
    ) -> None:
        """Compare the widget with the PNG kept in __snapshots__/ beside the test (snapshots.py has the rules)."""
        if self._snapshots is None:
            raise AppsdkError("assert_snapshot needs the pytest plugin's render_widget (it knows where the test is)")
        from appsdk_cli.testing.snapshots import check_snapshot

        check_snapshot(self._snapshots, self.screenshot(), self._harness.comparator(), name, threshold, max_diff_ratio)

    def close(self) -> None:
        """The widget goes, and its browser context with it (harness.py says why)."""
        self._harness.release(self)


def _view_frame(page: Any, timeout: float = 10.0) -> Any:
    """The widget's document: the frame on the view origin's /view (Playwright knows every frame of the
    page, out-of-process ones included, without asking the browser)."""
    deadline = time.monotonic() + timeout
    while True:
        for frame in page.frames:
            if "/view?" in frame.url:
                return frame
        if time.monotonic() > deadline:
            raise AssertionError("the host page shows no widget (no view frame in its #widget proxy)")
        page.wait_for_timeout(30)
