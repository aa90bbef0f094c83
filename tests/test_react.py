"""`appsdk new --template react`, `appsdk types`, `appsdk build` and the Vite side of `appsdk dev`.

The tests that need Node install the scaffold's pinned packages once per module with `npm ci` from
its lock file (npm's own cache makes every install after the first one fast); CI has node and npm.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import RunningServer, appsdk, serve_project, stop
from preview_helpers import CHROMIUM, NEEDS_CHROMIUM, marked_pids, widget_view

from appsdk_cli.browser.chromium import CHROMIUM_FLAGS
from appsdk_cli.checks.htmlscan import dev_server_loads, outside_loads, relative_assets
from appsdk_cli.web.types import typescript

NODE = shutil.which("node") and shutil.which("npm")
needs_node = pytest.mark.skipif(not NODE, reason="Node.js and npm are not installed; CI has them, so these run there")
PYTHON_ONLY_PATH = str(Path(sys.executable).parent)  # the venv: python and appsdk, no node


# --- without node --------------------------------------------------------------------------------------


def test_new_react_without_node_says_what_to_install_and_the_app_still_works(tmp_path: Path):
    assert shutil.which("node", path=PYTHON_ONLY_PATH) is None
    result = appsdk("new", "shelf", "--template", "react", "--path", str(tmp_path), env={"PATH": PYTHON_ONLY_PATH})
    assert result.returncode == 0, result.stderr
    project = tmp_path / "shelf"
    warning = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1, result.stderr
    assert "Node.js is not installed" in warning[0] and "20.19" in warning[0], warning
    assert f"then run `npm install` in {project / 'web'}" in warning[0]
    assert "not installed" in result.stdout and "React + TypeScript in web/" in result.stdout
    for name in ("web/package.json", "web/package-lock.json", "web/src/BookList.tsx", "web/src/tools.gen.ts"):
        assert (project / name).is_file(), name
    assert not (project / "widgets").exists() and not (project / "web" / "README-section.md").exists()
    assert "web/dist/" in (project / ".gitignore").read_text()
    readme = (project / "README.md").read_text()
    assert "## The widget: React + TypeScript in `web/`" in readme and "{{" not in readme
    lock = json.loads((project / "web" / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/@modelcontextprotocol/ext-apps"]["version"] == "2.0.4"

    # The app's own tests pass before anything is built: the server serves a page that says what to run.
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    sys.path.insert(0, str(project))
    try:
        import server  # the scaffold's own module

        assert "appsdk build" in server.book_list_widget()
    finally:
        sys.path.remove(str(project))
        sys.modules.pop("server", None)


def test_build_without_installed_packages_says_what_to_run(tmp_path: Path):
    appsdk("new", "shelf", "--template", "react", "--no-install", "--path", str(tmp_path), "--no-plugin")
    result = appsdk("build", str(tmp_path / "shelf"))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "npm install" in lines[0] and "Traceback" not in result.stderr, result.stderr


def test_template_option_is_checked():
    result = appsdk("new", "x", "--template", "vue")
    assert result.returncode == 2 and "choose html or react" in result.stderr


# --- appsdk types --------------------------------------------------------------------------------------


def test_types_follow_the_json_schema_of_pydantic_models():
    output = {
        "$defs": {
            "Book": {
                "properties": {
                    "title": {"type": "string", "description": "The book's title."},
                    "pages": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
                    "tags": {"type": "array", "items": {"enum": ["classic", "new"]}},
                    "ratings": {"type": "object", "additionalProperties": {"type": "number"}},
                    "first-line": {"type": "string"},
                },
                "required": ["title", "tags", "ratings", "first-line"],
                "title": "Book",
                "type": "object",
            }
        },
        "properties": {"books": {"items": {"$ref": "#/$defs/Book"}, "type": "array"}, "kind": {"const": "picks"}},
        "required": ["books", "kind"],
        "title": "BookPicks",
        "type": "object",
        "description": "The picks.",
    }
    other = {"properties": {"book": {"type": "string"}}, "required": ["book"], "title": "Book", "type": "object"}
    text = typescript(
        [
            {"name": "list-books", "outputSchema": output, "inputSchema": {"type": "object", "properties": {}}},
            {"name": "pick", "outputSchema": other, "inputSchema": {"type": "object", "properties": {}}},
            {"name": "ping", "inputSchema": {"type": "object"}},
        ]
    )
    assert (
        "export interface Book {\n"
        "  /** The book's title. */\n"
        "  title: string;\n"
        "  pages?: number | null;\n"
        '  tags: ("classic" | "new")[];\n'
        "  ratings: Record<string, number>;\n"
        '  "first-line": string;\n'
        "}\n"
    ) in text
    assert '/** The picks. */\nexport interface BookPicks {\n  books: Book[];\n  kind: "picks";\n}\n' in text
    assert "export type ListBooksOutput = BookPicks;" in text
    # Another tool's different model of the same name gets a name of its own, not a silent merge.
    assert "export interface PickBook {\n  book: string;\n}\n" in text and "export type PickOutput = PickBook;" in text
    assert 'export interface ToolOutputs {\n  "list-books": ListBooksOutput;\n  pick: PickOutput;\n}' in text
    assert "Without an outputSchema (so no type): ping." in text


# --- with node: install, build, serve, preview, dev ------------------------------------------------------


@pytest.fixture(scope="module")
def react_app(tmp_path_factory) -> Path:
    if not NODE:
        pytest.skip("Node.js and npm are not installed; CI has them, so these run there")
    parent = tmp_path_factory.mktemp("react")
    started = time.monotonic()
    result = appsdk("new", "shelf", "--template", "react", "--path", str(parent), timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    print(f"appsdk new --template react (with npm ci) took {time.monotonic() - started:.1f} s")
    assert "npm packages installed" in result.stdout
    return parent / "shelf"


@NEEDS_CHROMIUM
def test_the_react_apps_own_widget_tests_build_the_widget_and_pass_out_of_the_box(react_app: Path):
    """Right after `appsdk new --template react` (packages installed, nothing built): the app's own tests
    build web/dist/index.html themselves and render it, as the html template's do at once. Defined
    first of the react_app tests, so it runs before any of them builds."""
    dist = react_app / "web" / "dist" / "index.html"
    assert not dist.exists()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=react_app,
        capture_output=True,
        text=True,
        timeout=600,
        env={k: v for k, v in os.environ.items() if k != "CI"},  # a first run writes its snapshots
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "10 passed" in result.stdout, result.stdout
    assert dist.is_file()


def _build(project: Path) -> subprocess.CompletedProcess:
    return appsdk("build", str(project), timeout=300)


class _Loads(HTMLParser):
    """Every URL-bearing attribute of the document's elements (what a browser would fetch)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.urls += [value or "" for name, value in attrs if name in ("src", "href", "srcset", "data", "poster")]


@needs_node
def test_build_is_one_self_contained_file_the_server_serves(react_app: Path):
    started = time.monotonic()
    result = _build(react_app)
    assert result.returncode == 0, result.stdout + result.stderr
    print(f"appsdk build took {time.monotonic() - started:.1f} s")
    assert "built web/dist/index.html" in result.stdout and "self-contained" in result.stdout
    built = react_app / "web" / "dist" / "index.html"
    assert [p.name for p in built.parent.iterdir()] == ["index.html"]
    html = built.read_text()
    loads = _Loads()
    loads.feed(html)
    assert all(url.startswith("data:") for url in loads.urls), loads.urls
    assert "script" in loads.tags and "style" in loads.tags  # inlined, not linked
    assert relative_assets(html) == [] and outside_loads(html) == [] and dev_server_loads(html) == []
    assert "ui/initialize" in html  # the official SDK's bridge, bundled in
    assert '<meta name="appsdk-widget-source" content="web/index.html">' in html  # how the preview knows it

    server = serve_project(react_app)
    try:
        read = appsdk("read", "ui://widget/book-list.html", "--url", server.url, "--json")
        assert read.returncode == 0, read.stderr
        contents = json.loads(read.stdout)["contents"]
        assert contents[0]["text"] == html
    finally:
        stop(server.process)
    check = appsdk("check", str(react_app), "--json")
    findings = json.loads(check.stdout)["findings"]
    assert not [f for f in findings if f["severity"] == "error"], findings
    assert "APPS205" not in {f["rule"] for f in findings}

    # A source saved after the build: the check says the served widget is stale.
    source = react_app / "web" / "src" / "BookList.tsx"
    os.utime(source, (time.time() + 5, time.time() + 5))
    findings = json.loads(appsdk("check", str(react_app), "--json").stdout)["findings"]
    stale = [f for f in findings if f["rule"] == "APPS205"]
    assert stale and "web/src/BookList.tsx" in stale[0]["message"], findings
    os.utime(source, (time.time() - 10, time.time() - 10))  # back from the future, for the tests after this one
    assert _build(react_app).returncode == 0


@needs_node
def test_a_changed_python_model_is_a_type_error_in_the_widget(react_app: Path):
    server_py = react_app / "server.py"
    original = server_py.read_text()
    generated = react_app / "web" / "src" / "tools.gen.ts"
    before = generated.read_text()
    try:
        server_py.write_text(original.replace("    author: str\n", "    writer: str\n"))
        result = _build(react_app)
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("error: the widget does not type-check: web/src/BookList.tsx:"), lines
        assert "TS2339: Property 'author' does not exist on type 'Book'" in lines[0]
        assert "writer: string;" in generated.read_text()
    finally:
        server_py.write_text(original)
        appsdk("types", str(react_app))
    assert generated.read_text() == before


def _screenshot(server: RunningServer, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return appsdk("preview", "list-books", "--url", server.url, "--screenshot", str(out), *extra, timeout=180)


@needs_node
@NEEDS_CHROMIUM
def test_preview_renders_the_built_react_widget_in_both_themes(react_app: Path, tmp_path: Path):
    if not (react_app / "web" / "dist" / "index.html").is_file():
        assert _build(react_app).returncode == 0
    server = serve_project(react_app)
    try:
        light, dark = tmp_path / "light.png", tmp_path / "dark.png"
        for out, theme in ((light, "light"), (dark, "dark")):
            result = _screenshot(server, out, "--theme", theme)
            assert result.returncode == 0, result.stdout + result.stderr
        assert light.stat().st_size > 2000 and light.read_bytes() != dark.read_bytes()
        from playwright.sync_api import sync_playwright

        from appsdk_cli.connection import Target
        from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

        for bridge_only in (False, True):
            preview = PreviewServer(prepare(Target(url=server.url), "list-books", []), PreviewOptions()).start()
            try:
                with sync_playwright() as playwright:
                    browser = playwright.chromium.launch(
                        executable_path=CHROMIUM, headless=True, args=list(CHROMIUM_FLAGS)
                    )
                    page = browser.new_page()
                    page.goto(preview.page_url(theme="dark", openai="0" if bridge_only else "1"))
                    widget = widget_view(page)
                    widget.locator("li", has_text="Frankenstein").wait_for(timeout=30000)
                    assert widget.locator("li").count() == 3
                    assert widget.locator(".count").inner_text() == "3 books"
                    assert widget.locator("li").nth(1).inner_text().startswith("2\nPride and Prejudice\nby Jane Austen")
                    assert widget.locator("html").get_attribute("data-theme") == "dark"
                    browser.close()
            finally:
                preview.close()
    finally:
        stop(server.process)


def teardown_answers(server_url: str, browser) -> dict[str, str]:
    """What the scaffold's widget answers the host's ui/resource-teardown (sent before every re-render, so
    after every save in the workbench), with window.openai and without it (a bridge-only host): the traffic
    record's kind, "response" or "error"."""
    from appsdk_cli.connection import Target
    from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

    kinds: dict[str, str] = {}
    for openai in ("1", "0"):
        preview = PreviewServer(prepare(Target(url=server_url), "list-books", []), PreviewOptions()).start()
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(preview.page_url(openai=openai))
            widget_view(page).locator("li", has_text="Frankenstein").wait_for(timeout=30000)
            page.evaluate("appsdkPreview.teardown()")
            asked = page.evaluate(
                "appsdkPreview.traffic.filter((r) => r.method === 'ui/resource-teardown').map((r) => r.kind)"
            )
            assert len(asked) in (0, 2), asked  # none sent, or the request and its answer
            kinds["openai" if openai == "1" else "bridge only"] = asked[1] if asked else "not asked"
        finally:
            context.close()
            preview.close()
    return kinds


@needs_node
@NEEDS_CHROMIUM
def test_the_react_widget_answers_the_hosts_teardown(react_app: Path, browser):
    """The SDK's App answers a request it has no handler for with -32601: the scaffold's must handle
    ui/resource-teardown, or every save adds a red row to a new app's traffic."""
    if not (react_app / "web" / "dist" / "index.html").is_file():
        assert _build(react_app).returncode == 0
    server = serve_project(react_app)
    try:
        assert teardown_answers(server.url, browser) == {"openai": "response", "bridge only": "response"}
    finally:
        stop(server.process)


@NEEDS_CHROMIUM
def test_the_plain_widget_answers_the_hosts_teardown(tmp_path: Path, browser):
    """The html scaffold's widget speaks the bridge only where there is no window.openai: where it does, it
    answers ui/resource-teardown; where it does not, the host sends none (it sends it to an initialized view)."""
    assert appsdk("new", "shelf", "--path", str(tmp_path)).returncode == 0
    server = serve_project(tmp_path / "shelf")
    try:
        assert teardown_answers(server.url, browser) == {"openai": "not asked", "bridge only": "response"}
    finally:
        stop(server.process)


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def dev_session(react_app: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen, Path, str]]:
    """`appsdk dev` on the React app, in a session of its own, with a marker to find everything it started."""
    marker = f"APPSDK_REACT_TEST_{os.getpid()}_{time.monotonic_ns()}"
    log = tmp_path / "dev.log"
    state_file = react_app / ".appsdk" / "dev.json"
    state_file.unlink(missing_ok=True)
    with log.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "dev", "--port", "0"],
            cwd=react_app,
            env={**os.environ, marker: "1", "COLUMNS": "200"},
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for(lambda: state_file.is_file() or process.poll() is not None, 120, "appsdk dev to start")
        assert process.poll() is None, log.read_text()
        yield process, log, marker
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@needs_node
@NEEDS_CHROMIUM
def test_dev_updates_the_widget_by_hmr_keeping_state_and_shows_build_errors(
    react_app: Path, dev_session, monkeypatch, tmp_path: Path, browser
):

    from appsdk_cli.connection import Target
    from appsdk_cli.host.devwidget import vite_url_for
    from appsdk_cli.preview import PreviewOptions, PreviewServer, prepare

    process, log, marker = dev_session
    state = json.loads((react_app / ".appsdk" / "dev.json").read_text())
    vite_url = state["extra"]["vite_url"]
    assert vite_url.startswith("http://127.0.0.1:")
    built = react_app / "web" / "dist" / "index.html"
    _wait_for(lambda: "widget rebuilt" in log.read_text(), 120, "the first build")
    source = react_app / "web" / "src" / "BookList.tsx"

    def save(text: str) -> None:
        # Whole, as editors save: write_text truncates first, and on a busy machine Vite and the watching
        # build have read the empty file between the two and answered for it (main.tsx's import failing,
        # a full page reload), which is not what the test is about.
        saving = react_app / ".BookList.tsx.saving"
        saving.write_text(text)
        os.replace(saving, source)

    original = source.read_text()
    # From any other folder (`appsdk dev PATH`'s own workbench, a preview run elsewhere) by the server's URL.
    monkeypatch.chdir(tmp_path)
    elsewhere = prepare(Target(url=state["url"]), "list-books", [])
    assert vite_url_for(elsewhere, elsewhere.template) == vite_url.rstrip("/") + "/"
    monkeypatch.chdir(react_app)  # the preview finds `appsdk dev` (and its Vite) from the project, as a user runs it
    preview = PreviewServer(prepare(Target(url=state["url"]), "list-books", []), PreviewOptions()).start()
    try:
        # The file's one browser: a second Playwright in this thread would meet the first one's loop.
        page = browser.new_page()
        # Why a page reloaded, should one: Vite's client says so on the console.
        reloads: list[str] = []
        page.on("console", lambda m: reloads.append(m.text) if "reload" in m.text.lower() else None)
        page.goto(preview.page_url())
        widget = widget_view(page)
        widget.locator("li", has_text="Frankenstein").wait_for(timeout=60000)
        vote = widget.locator("button.vote").first
        vote.click()
        vote.click()
        assert vote.inner_text().endswith("2")
        frame = next(f for f in page.frames if "/view?" in f.url)
        # The local preview's widget comes from Vite (the HMR client among its scripts).
        assert frame.evaluate("[...document.scripts].some(s => s.src === document.baseURI + '@vite/client')")
        assert frame.evaluate("document.baseURI") == vite_url
        frame.evaluate("window.__loadedOnce = 'yes'")

        # A save: the heading changes in place, the page is not reloaded, the votes are kept.
        save(original.replace("<h1>Book club picks</h1>", "<h1>Next up</h1>"))
        widget.locator("h1", has_text="Next up").wait_for(timeout=30000)
        assert frame.evaluate("window.__loadedOnce") == "yes", reloads
        assert vote.inner_text().endswith("2")
        # What ChatGPT gets follows too: the self-contained file, rebuilt, with no dev-server URL in it.
        _wait_for(lambda: "Next up" in built.read_text(), 60, "web/dist/index.html to be rebuilt")
        assert dev_server_loads(built.read_text()) == [] and vite_url not in built.read_text()
        good = built.read_text()

        # A syntax error: one line with file and line over the last good widget, in the page and the terminal.
        broken = original.replace("<h1>Book club picks</h1>", "<h1>Next up</h1>").replace(
            '<div className="author">', '<div className="author"'
        )
        logged = len(log.read_text())  # what the terminal says about this save
        save(broken)
        banner = widget.locator("[data-appsdk-preview=build-error]")
        banner.wait_for(timeout=30000)
        assert re.fullmatch(r"Build error: web/src/BookList\.tsx:\d+:\d+: \S.*", banner.inner_text().strip()), (
            banner.inner_text()
        )
        assert "\n" not in banner.inner_text().strip()
        assert widget.locator("li").count() == 3 and vote.inner_text().endswith("2")
        failed = _wait_for(
            lambda: [x for x in log.read_text()[logged:].splitlines() if "widget build failed" in x],
            60,
            "the terminal",
        )
        assert "web/src/BookList.tsx:" in failed[0] and "the last good widget stays up" in failed[0]
        assert built.read_text() == good  # ChatGPT keeps the last good widget too

        # Fixed: the message goes, the widget updates, still without a reload.
        fixed = original.replace("<h1>Book club picks</h1>", "<h1>Fixed</h1>")
        save(fixed)
        widget.locator("h1", has_text="Fixed").wait_for(timeout=90000)  # slow when the machine is busy
        banner.wait_for(state="detached", timeout=60000)
        assert frame.evaluate("window.__loadedOnce") == "yes", reloads
        assert vote.inner_text().endswith("2")

        # dev's own workbench shows the same widget from Vite: its widgets are on the app's own site,
        # the one view origin Vite admits.
        workbench = re.search(r"Workbench\s+(http://127\.0\.0\.1:\d+/)", log.read_text())
        assert workbench, log.read_text()
        bench = browser.new_page(viewport={"width": 1280, "height": 800})
        bench.goto(workbench.group(1))
        bench.locator("button", has_text="Run").first.click()
        in_bench = widget_view(bench.locator(".host-frame iframe").first.content_frame)
        in_bench.locator("h1", has_text="Fixed").wait_for(timeout=60000)
        bench_view = next(f for f in bench.frames if "/view?" in f.url)
        assert bench_view.evaluate("document.baseURI") == vite_url
        bench.close()  # each page made by browser.new_page closes its own context
        page.close()
    finally:
        source.write_text(original)
        preview.close()

    # One Ctrl-C stops the server, Vite and everything they started.
    assert marked_pids(marker), "appsdk dev's processes carry the marker"
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 0, log.read_text()
    _wait_for(lambda: not marked_pids(marker), 10, "every process of appsdk dev to end")
    assert "appsdk dev stopped" in log.read_text()


@needs_node
@NEEDS_CHROMIUM
def test_a_react_widget_that_throws_is_a_marked_run_and_a_line_in_devs_terminal(
    react_app: Path, dev_session, browser, tmp_path: Path
):
    """React unmounts a tree that throws in render: the card would be blank. The workbench marks the run
    with the error instead, and dev's terminal says it in one line."""
    _, log, _ = dev_session
    _wait_for(lambda: "widget rebuilt" in log.read_text(), 120, "the first build")
    source = react_app / "web" / "src" / "BookList.tsx"
    original = source.read_text()
    anchor = "  const books = output?.books ?? [];\n"
    throwing = anchor + '  if (books.length) throw new Error("the shelf collapsed");\n'
    saving = react_app / ".BookList.tsx.saving"
    saving.write_text(original.replace(anchor, throwing, 1))
    os.replace(saving, source)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        workbench = re.search(r"Workbench\s+(http://127\.0\.0\.1:\d+/)", log.read_text())
        assert workbench, log.read_text()
        bench = context.new_page()
        bench.goto(workbench.group(1))
        bench.wait_for_function("() => window.appsdkWorkbench && window.appsdkWorkbench.ready")
        bench.locator("#run-button").click()
        bench.wait_for_function("() => (window.appsdkWorkbench.runs()[0] || {}).widgetError", timeout=60000)
        card = bench.locator(".run").first
        assert card.get_attribute("data-outcome") == "error"
        assert "Uncaught Error: the shelf collapsed" in card.locator(".run-problem").text_content()
        shots = Path(os.environ.get("APPSDK_TEST_SCREENSHOTS", tmp_path))
        shots.mkdir(parents=True, exist_ok=True)
        bench.screenshot(path=str(shots / "workbench-react-widget-threw.png"))
        said = _wait_for(
            lambda: [x for x in log.read_text().splitlines() if x.startswith("widget error in list-books (run #1)")],
            30,
            "the terminal's line",
        )
        assert len(said) == 1 and "the shelf collapsed" in said[0], said
    finally:
        context.close()
        source.write_text(original)


@needs_node
def test_dev_rebuilds_the_widget_after_a_model_change_so_check_is_clean(react_app: Path, dev_session):
    """tools.gen.ts is imported for its types only, so no bundle holds it; dist/ must follow it all the same."""
    process, log, _ = dev_session
    _wait_for(lambda: "widget rebuilt" in log.read_text(), 120, "the first build")
    server_py = react_app / "server.py"
    original = server_py.read_text()
    built = react_app / "web" / "dist" / "index.html"
    generated = react_app / "web" / "src" / "tools.gen.ts"

    def model_saved(text: str) -> None:
        seen = len(log.read_text())
        server_py.write_text(text)
        _wait_for(lambda: "widget types" in log.read_text()[seen:], 60, "the widget's types regenerated")
        _wait_for(lambda: built.stat().st_mtime >= generated.stat().st_mtime, 60, "web/dist/ rebuilt after them")
        _wait_for(lambda: "widget rebuilt" in log.read_text()[seen:], 30, "the rebuild's line")
        checked = appsdk("check", cwd=react_app, timeout=120)
        assert "APPS205" not in checked.stdout and "older than" not in checked.stdout, checked.stdout

    try:
        model_saved(original.replace("    author: str\n", "    author: str\n    year: int | None = None\n"))
        assert "year?: number | null;" in generated.read_text()
    finally:
        model_saved(original)
    assert process.poll() is None


@needs_node
def test_dev_killed_outright_leaves_no_vite_behind(react_app: Path, dev_session):
    process, log, marker = dev_session
    vite = [pid for pid in marked_pids(marker) if b"runner.mjs" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert vite, log.read_text()
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    # Vite's stdin was a pipe from appsdk: with appsdk gone it ends itself.
    _wait_for(lambda: not marked_pids(marker), 30, "Vite and the workers to end after appsdk dev was killed")


def _websocket_handshake(vite_url: str, origin: str, token: str | None) -> str:
    """The status line Vite's HMR websocket answers an upgrade from `origin` with (as a browser asks)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(vite_url)
    query = f"?token={token}" if token is not None else ""
    request = (
        f"GET /{query} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        f"Sec-WebSocket-Protocol: vite-hmr\r\nOrigin: {origin}\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as connection:
        connection.sendall(request.encode())
        answer = b""
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            while b"\r\n" not in answer:
                chunk = connection.recv(1024)
                if not chunk:
                    break
                answer += chunk
    return answer.split(b"\r\n", 1)[0].decode("latin-1")


@needs_node
def test_dev_vite_answers_across_origins_only_the_view_origin_of_its_own_server(react_app: Path, dev_session):
    """Issue 25, item 3: a widget of another server (another loopback port, another view origin, a
    sandboxed frame) reads nothing of the project from `appsdk dev`'s Vite; the view origin that shows
    this server's widget does, on whatever port the host picked, and its HMR websocket still connects."""
    import httpx

    from appsdk_cli.netloc import sandbox_host, sandbox_site_id

    process, log, _ = dev_session
    state = json.loads((react_app / ".appsdk" / "dev.json").read_text())
    vite_url = state["extra"]["vite_url"]
    own = sandbox_host("view", sandbox_site_id(state["url"]))
    other = sandbox_host("view", sandbox_site_id("http://127.0.0.1:8001/mcp"))
    attackers = [
        "http://127.0.0.1:9999",
        "http://localhost:3000",
        f"http://{other}:1234",
        "null",
        f"http://evil.{own}:1234",
        f"http://{own}.evil.test:1234",
        f"https://{own}:1234",
    ]
    with httpx.Client(timeout=30) as client:
        for path in ("src/BookList.tsx", "@vite/client"):
            url = vite_url + path
            same_origin = client.get(url)  # Vite's own page loading its module graph: no Origin, no CORS
            assert same_origin.status_code == 200, (path, log.read_text())
            assert "access-control-allow-origin" not in same_origin.headers
            for origin in attackers:
                for method in ("GET", "OPTIONS"):
                    answer = client.request(
                        method, url, headers={"Origin": origin, "Access-Control-Request-Method": "GET"}
                    )
                    assert "access-control-allow-origin" not in answer.headers, (method, path, origin, answer.headers)
            for port in (8000, 54321):
                origin = f"http://{own}:{port}"
                answer = client.get(url, headers={"Origin": origin})
                assert answer.status_code == 200
                assert answer.headers["access-control-allow-origin"] == origin, (path, answer.headers)
        client_code = client.get(vite_url + "@vite/client", headers={"Origin": f"http://{own}:8000"}).text
    token = re.search(r'const wsToken = "([^"]+)"', client_code)
    assert token, "Vite's client carries its websocket token"
    # HMR from the view origin: the token it could read opens the websocket; without it, nothing does.
    assert " 101 " in _websocket_handshake(vite_url, f"http://{own}:8000", token[1])
    assert " 101 " not in _websocket_handshake(vite_url, "http://127.0.0.1:9999", None)
    assert process.poll() is None


def test_check_reports_a_dev_server_page_served_as_the_widget():
    page = (
        '<!doctype html><html><head><script type="module" src="http://localhost:5173/@vite/client"></script>'
        '<link rel="stylesheet" href="http://127.0.0.1:5173/src/styles.css"><img src="http://localhost:5173/a.png">'
        '</head><body><script type="module" src="https://cdn.example.com/app.js"></script></body></html>'
    )
    assert [load.url for load in dev_server_loads(page)] == [
        "http://localhost:5173/@vite/client",
        "http://127.0.0.1:5173/src/styles.css",
    ]
