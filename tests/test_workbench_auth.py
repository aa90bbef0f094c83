"""The workbench of `appsdk dev` on a protected app (`appsdk new --auth`), in Chromium: it signs in as
`appsdk call` does, for the page's calls and for a widget's own, and steps up when a tool asks for more.

With --auth-user the development authorization server approves at once, so the page lists the tools
as it loads. Without it the page offers Sign in, and the sign-in page opens in "the browser" ($BROWSER,
here a script that hands the URL to the test, which approves it in Chromium as a person would)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import appsdk, stop
from preview_helpers import widget_view
from test_auth import auth_project
from test_dev import DevServer, start_dev, wait_until
from test_workbench_browser import open_workbench, wait_run
from test_workbench_seams import screenshot

pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')")

# The widget calls suggest-book (which needs books:write) itself, through window.openai.callTool.
SUGGEST_BUTTON = """
<button id="suggest" type="button">Suggest Emma</button>
<p id="suggested"></p>
<script>
document.getElementById("suggest").addEventListener("click", async () => {
  const out = document.getElementById("suggested");
  try {
    const answer = await window.openai.callTool("suggest-book", { title: "Emma", author: "Jane Austen" });
    const list = (answer.structuredContent || {}).suggestions || [];
    out.textContent = answer.isError ? "refused" : `${list.length} suggested, the last by ${list[list.length - 1].by}`;
  } catch (error) {
    out.textContent = `failed: ${error.message}`;
  }
});
</script>
</body>"""


def protected_project(tmp_path: Path) -> Path:
    project = auth_project(tmp_path)
    page = project / "widgets" / "book-list.html"
    page.write_text(page.read_text().replace("</body>", SUGGEST_BUTTON, 1))
    server = project / "server.py"
    scheme = 'meta={"securitySchemes": auth.security_schemes(auth.WRITE)},'
    assert scheme in server.read_text()
    widget_may_call = 'meta={"securitySchemes": auth.security_schemes(auth.WRITE), "openai/widgetAccessible": True},'
    server.write_text(server.read_text().replace(scheme, widget_may_call, 1))
    return project


def workbench_url(dev: DevServer) -> str:
    wait_until(lambda: "Workbench" in dev.out(), message="the workbench line")
    line = next(line for line in dev.out().splitlines() if "Workbench" in line and "http://127.0.0.1:" in line)
    return line[line.index("http://127.0.0.1:") :].split()[0]


def granted_scopes(home: Path) -> list[str]:
    (cache,) = (home / "tokens").iterdir()
    (grant,) = json.loads(cache.read_text())["grants"].values()
    return grant["scopes"]


def revoke_the_cached_token(home: Path, dev: DevServer) -> None:
    """Revoke the sign-in appsdk cached, at dev's authorization server: the next call gets a 401."""
    (cache,) = (home / "tokens").iterdir()
    (grant,) = json.loads(cache.read_text())["grants"].values()
    origin = dev.url.removesuffix("/mcp")
    httpx.post(origin + "/revoke", data={"token": grant["access_token"], "client_id": grant["client_id"]})


def run_from_the_form(page, tool: str, values: dict[str, str]) -> None:
    page.click(f'#tool-list [data-tool="{tool}"]')
    for path, value in values.items():
        page.locator(f'#form-pane [data-path="{path}"] input').fill(value)
    page.click("#run-button")


def test_dev_workbench_signs_in_steps_up_and_a_widgets_own_call_signs_in_again(
    page, tmp_path: Path, appsdk_home_of_the_test: Path
) -> None:
    home = appsdk_home_of_the_test
    dev = start_dev(protected_project(tmp_path), "--auth-user", "ada")
    try:
        bench = workbench_url(dev)
        # The page lists the tools as it loads: the dev AS approves ada at once, no browser, no dead end.
        open_workbench(page, bench)
        page.wait_for_selector('#tool-list [data-tool="suggest-book"]', timeout=20_000)
        assert page.locator("#tools-error").is_hidden() and page.locator("#sign-in-button").is_hidden()
        assert granted_scopes(home) == ["books:read"]

        # A step-up from the page: suggest-book answers insufficient_scope for books:write, the workbench
        # signs in again for it and runs the tool again.
        run_from_the_form(page, "suggest-book", {"title": "Dune", "author": "Frank Herbert"})
        run = wait_run(page)
        assert run["status"] == "done" and run["result"].get("isError") is not True, run
        assert run["result"]["structuredContent"]["suggestions"][-1] == {
            "title": "Dune",
            "author": "Frank Herbert",
            "by": "ada",
        }
        assert granted_scopes(home) == ["books:read", "books:write"]

        # Forgotten: the next run gets a 401, signs in and goes again.
        assert appsdk("auth", "logout", "--url", dev.url).returncode == 0
        run_from_the_form(page, "list-books", {})
        run = wait_run(page, count=2)
        assert run["status"] == "done" and run["result"]["structuredContent"]["books"], run
        assert granted_scopes(home) == ["books:read"]

        # The widget's own call of suggest-book steps up too (host page -> /api/call -> the server).
        view = widget_view(page.locator(".run").nth(1).locator(".host-frame iframe").first.content_frame)
        view.locator("#suggest").click()
        view.get_by_text("2 suggested, the last by ada").wait_for(timeout=30_000)
        assert granted_scopes(home) == ["books:read", "books:write"]

        # A revoked token: the widget's next call gets a 401, and the host signs in and calls again.
        revoke_the_cached_token(home, dev)
        view.locator("#suggest").click()
        view.get_by_text("3 suggested, the last by ada").wait_for(timeout=30_000)
        page.screenshot(path=str(tmp_path / "signed-in.png"))
        assert "Traceback" not in dev.err()
    finally:
        stop(dev.process)


def url_catching_browser(tmp_path: Path) -> tuple[Path, Path]:
    """$BROWSER for the dev process's webbrowser: writes the URL it was asked to open, for the test."""
    opened = tmp_path / "opened.txt"
    script = tmp_path / "browser"
    script.write_text(f"#!{sys.executable}\nimport sys\nopen({str(opened)!r}, 'a').write(sys.argv[1] + '\\n')\n")
    script.chmod(0o755)
    return script, opened


def test_without_auth_user_the_page_offers_sign_in_and_the_consent_page_opens(
    page, browser, tmp_path: Path, monkeypatch
) -> None:
    script, opened = url_catching_browser(tmp_path)
    monkeypatch.setenv("BROWSER", str(script))
    dev = start_dev(protected_project(tmp_path))
    try:
        bench = workbench_url(dev)
        open_workbench(page, bench)
        # No browser opens unasked: the page says the server wants a sign-in, and offers it.
        page.wait_for_selector("#sign-in-button", state="visible", timeout=20_000)
        assert "wants you to sign in" in page.locator("#tools-error").text_content()
        assert not opened.exists()
        page.screenshot(path=str(tmp_path / "sign-in-offered.png"))

        page.click("#sign-in-button")
        wait_until(lambda: opened.exists() and opened.read_text().strip(), message="the sign-in page opened")
        page.wait_for_selector("#sign-in-status a", timeout=10_000)  # the sign-in page, as a link too
        authorize = opened.read_text().split()[0]
        # The person at the browser: the consent page, ada, approve.
        person = browser.new_context().new_page()
        person.goto(authorize)
        person.locator('input[value="ada"], option[value="ada"]').first.wait_for(state="attached")
        person.screenshot(path=str(tmp_path / "consent.png"))
        if person.locator('select[name="user"]').count():
            person.select_option('select[name="user"]', "ada")
        else:
            person.check('input[value="ada"]')
        person.click('button[value="approve"]')
        person.context.close()

        page.wait_for_selector('#tool-list [data-tool="whoami"]', timeout=30_000)
        assert page.locator("#sign-in-button").is_hidden() and page.locator("#tools-error").is_hidden()
        run_from_the_form(page, "whoami", {})
        run = wait_run(page)
        assert run["status"] == "done" and run["result"]["structuredContent"]["subject"] == "ada", run
        time.sleep(0.2)
        assert "Traceback" not in dev.err()
    finally:
        stop(dev.process)


def test_preview_signs_in_again_when_a_widgets_own_call_gets_401_and_steps_up(
    page, tmp_path: Path, appsdk_home_of_the_test: Path
) -> None:
    """`appsdk preview TOOL` on its own: the widget's own call of a tool that wants more scope steps up,
    and after the token is revoked its next call gets a 401, and the host signs in and calls again."""
    home = appsdk_home_of_the_test
    dev = start_dev(protected_project(tmp_path), "--auth-user", "ada")
    out = tmp_path / "preview.out"
    with out.open("w") as stdout, (tmp_path / "preview.err").open("w") as stderr:
        preview = subprocess.Popen(
            [sys.executable, "-m", "appsdk_cli", "preview", "list-books", "--url", dev.url, "--no-open"],
            stdout=stdout,
            stderr=stderr,
        )
    try:
        wait_until(lambda: "http://127.0.0.1:" in out.read_text(), message="the preview's URL")
        url = next(line for line in out.read_text().splitlines() if line.startswith("http://127.0.0.1:"))
        page.goto(url)
        view = widget_view(page)
        view.locator("#suggest").click()
        view.get_by_text("1 suggested, the last by ada").wait_for(timeout=30_000)
        assert granted_scopes(home) == ["books:read", "books:write"]

        revoke_the_cached_token(home, dev)
        view.locator("#suggest").click()
        view.get_by_text("2 suggested, the last by ada").wait_for(timeout=30_000)
        said = (tmp_path / "preview.err").read_text() + out.read_text()
        assert said.count("signed in to") == 3, said  # the first sign-in, the step-up, after the revocation
        assert "Traceback" not in said
    finally:
        stop(preview)
        stop(dev.process)


def no_browser_here(tmp_path: Path) -> tuple[Path, Path]:
    """$BROWSER that cannot start: writes the URL it was asked to open (for the test) and fails, as a
    machine without a desktop does."""
    opened = tmp_path / "asked.txt"
    script = tmp_path / "nobrowser"
    record = f"open({str(opened)!r}, 'a').write(sys.argv[1] + '\\n')"
    script.write_text(f"#!{sys.executable}\nimport sys\n{record}\nsys.exit(1)\n")
    script.chmod(0o755)
    return script, opened


def approve_as_ada(browser, url: str) -> None:
    person = browser.new_context().new_page()
    person.goto(url)
    person.locator('input[value="ada"], option[value="ada"]').first.wait_for(state="attached")
    if person.locator('select[name="user"]').count():
        person.select_option('select[name="user"]', "ada")
    else:
        person.check('input[value="ada"]')
    person.click('button[value="approve"]')
    person.context.close()


def test_without_a_browser_the_sign_in_link_stays_and_a_run_waiting_for_it_says_so_and_cancels(
    page, browser, tmp_path: Path, monkeypatch
) -> None:
    script, asked = no_browser_here(tmp_path)
    monkeypatch.setenv("BROWSER", str(script))
    dev = start_dev(protected_project(tmp_path))
    try:
        open_workbench(page, workbench_url(dev))
        page.wait_for_selector("#sign-in-button", state="visible", timeout=20_000)
        # Before the sign-in the skills wait for it too: said as the tools say it, not as an error.
        skills = page.locator("#skills-error")
        skills.wait_for(state="visible", timeout=10_000)
        assert skills.text_content().startswith("Sign in to see the skills"), skills.text_content()
        assert "wants-sign-in" in (skills.get_attribute("class") or "")
        assert page.evaluate("getComputedStyle(document.getElementById('skills-error')).color") == page.evaluate(
            "getComputedStyle(document.getElementById('tools-error')).color"
        )

        page.click("#sign-in-button")
        # No browser could be started: the note says so, and the sign-in page is still a link beside it.
        status = page.locator("#sign-in-status")
        status.get_by_text("no browser could be started here").wait_for(timeout=20_000)
        wait_until(lambda: asked.exists() and asked.read_text().strip(), message="the browser was asked")
        link = status.locator("a")
        assert link.count() == 1 and link.get_attribute("href") == asked.read_text().split()[0], status.inner_html()
        screenshot(page, "sign-in-no-browser.png", tmp_path)
        approve_as_ada(browser, link.get_attribute("href"))
        page.wait_for_selector('#tool-list [data-tool="suggest-book"]', timeout=30_000)
        page.wait_for_function("() => document.getElementById('skills-error').hidden", timeout=10_000)

        # A step-up from a run (suggest-book wants books:write): the card says the run waits for the user's
        # sign-in, with the page as a link, and Cancel ends it at once instead of a 120 s spin.
        run_from_the_form(page, "suggest-book", {"title": "Dune", "author": "Frank Herbert"})
        card = page.locator(".run").first
        card.locator(".status-text", has_text="Waiting for you to sign in").wait_for(timeout=20_000)
        card.locator(".run-progress a").wait_for(timeout=20_000)
        assert card.locator(".run-progress a").get_attribute("href").startswith("http://127.0.0.1:")
        assert "no browser could be started" in card.locator(".run-progress").text_content()
        screenshot(page, "run-waits-for-sign-in.png", tmp_path)
        started = time.monotonic()
        card.locator('[data-action="cancel"]').click()
        run = wait_run(page, calls=0, timeout=10_000)
        assert run["status"] == "cancelled" and time.monotonic() - started < 10, run
        assert "Traceback" not in dev.err()
    finally:
        stop(dev.process)
