"""Rendered-widget tests share a browser (harness.py), and see nothing of the test before.

A widget stores what it can in its origin (local and session storage, IndexedDB, Cache Storage, the
origin's file system, a cookie), its tab's history grows, and the host page's controls change its theme;
the next rendering finds none of it, in its own viewport and color scheme, whatever the browser's version
(#36: Chromium 150 handed sessionStorage on). A test that took Playwright's context does not hand it on.
Real app server, real host, real Chromium.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from preview_helpers import NEEDS_CHROMIUM

from appsdk_cli.scaffold import scaffold
from appsdk_cli.testing.app import AppLocation, start_app
from appsdk_cli.testing.harness import Harness
from appsdk_cli.testing.rendering import Rendering

pytestmark = [pytest.mark.browser, NEEDS_CHROMIUM]

TITLES = ["Frankenstein", "Pride and Prejudice", "The Time Machine"]
PLANT = """async () => {
  localStorage.setItem("planted", "yes");
  sessionStorage.setItem("planted", "yes");
  document.cookie = "planted=yes; path=/";
  await caches.open("planted").then((cache) => cache.put("/planted", new Response("yes")));
  await new Promise((resolve, reject) => {
    const opened = indexedDB.open("planted", 1);
    opened.onupgradeneeded = () => opened.result.createObjectStore("kept");
    opened.onsuccess = () => { opened.result.close(); resolve(null); };
    opened.onerror = () => reject(opened.error);
  });
  const files = await navigator.storage.getDirectory();
  await files.getFileHandle("planted", { create: true });
  window.name = "planted";
}"""
FIND = """async () => ({
  local: localStorage.getItem("planted"),
  session: sessionStorage.getItem("planted"),
  cookie: document.cookie,
  caches: await caches.keys(),
  databases: (await indexedDB.databases()).map((d) => d.name),
  name: window.name,
  files: await (async () => {
    const names = [];
    for await (const name of (await navigator.storage.getDirectory()).keys()) names.push(name);
    return names;
  })(),
  history: history.length,
})"""
NOTHING = {"local": None, "session": None, "cookie": "", "caches": [], "databases": [], "name": "", "files": []}


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    project = scaffold("book-club", Path(tmp_path_factory.mktemp("isolation"))).path
    app = start_app(AppLocation.of(project))
    try:
        with Harness(app) as harness:
            yield harness
    finally:
        app.close()


def rendered_background(widget) -> str:
    return widget.frame.evaluate("() => getComputedStyle(document.body).backgroundColor")


def test_the_next_rendering_sees_nothing_the_last_one_stored(harness: Harness):
    first = harness.render(Rendering(tool="list-books", arguments={"month": "June"}))
    first.frame.evaluate(PLANT)
    found = first.frame.evaluate(FIND)
    # (A cookie it sets may be refused already: the view is a third party to the host page.)
    assert found["local"] == "yes" and found["session"] == "yes"
    assert found["caches"] == ["planted"] and "planted" in found["databases"] and found["files"] == ["planted"]
    history = found.pop("history")  # the tab's, as a fresh one has it after loading the host page
    first.set_theme("dark")
    assert rendered_background(first) == "rgb(31, 31, 31)"
    first.close()

    second = harness.render(Rendering(tool="list-books", arguments={"month": "June"}, device="mobile"))
    try:
        assert second.texts(".title") == TITLES
        assert second.frame.evaluate(FIND) == {**NOTHING, "history": history}
        assert rendered_background(second) == "rgb(255, 255, 255)"  # light, as this rendering asked
        assert second.frame.evaluate("() => innerWidth") < 600  # the mobile viewport, not the last one's
    finally:
        second.close()


def test_a_test_that_took_the_context_gets_it_for_itself(harness: Harness):
    widget = harness.render(Rendering(tool="list-books", arguments={"month": "June"}))
    widget.context.set_offline(True)  # what a test may do with it, and no later test may inherit
    widget.close()
    after = harness.render(Rendering(tool="list-books", arguments={"month": "June"}))
    try:
        assert after.texts(".title") == TITLES
    finally:
        after.close()
