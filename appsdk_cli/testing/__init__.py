"""`appsdk test` and appsdk's pytest plugin: the developer's app under test the way a host sees it.

    app.py        the app under test: found as `appsdk dev`/`check` find it, started once (appserver.py)
    harness.py    one host (host/) and one Chromium per session (browser/, on its Playwright thread); a
                  rendering is a run on that host
    rendering.py  what a test renders, and why a rendering failed (the template's line, not the view's)
    widget.py     a rendered widget: text, elements, clicks, state, messages, host log, screenshot
    snapshots.py  visual snapshots beside the test, compared in the browser
    matrix.py     the `hosts` marker's cases: profiles × themes × modes × devices
    smoke.py      the generated suite of `appsdk test --url` (smoke_suite/ holds its test module)
    plugin.py     the pytest plugin (entry point `appsdk` in the pytest11 group): fixtures, marker, options
    run.py        `appsdk test`: pytest run in a child with the plugin, its outcome counted

This package imports nothing heavy at its top, since pytest loads plugin.py in every project with appsdk.
"""
