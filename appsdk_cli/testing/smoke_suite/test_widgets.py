"""`appsdk test --url/--stdio` with no tests of the project's own: each widget tool, rendered in each profile.

Its cases come from the plugin (appsdk_smoke_case, from the server's tools/list); a case fails on a host
error, a CSP violation or a widget that never shows its data (the rendering itself checks all three).
"""

import pytest


def test_widget_renders(appsdk_smoke_case, request):
    if appsdk_smoke_case.problem:  # an unreachable server fails here, with or without a browser
        pytest.fail(appsdk_smoke_case.problem, pytrace=False)
    render_widget = request.getfixturevalue("render_widget")
    widget = render_widget(appsdk_smoke_case.tool, appsdk_smoke_case.arguments, profile=appsdk_smoke_case.profile)
    assert widget.text.strip() or widget.query("canvas, svg, img"), "the widget shows nothing"
    errors = [
        line for line in widget.errors if line.kind != "console"
    ]  # the widget's own console.error is its business
    assert not errors, f"the host log has {len(errors)} error(s), the first: {errors[0]}"
