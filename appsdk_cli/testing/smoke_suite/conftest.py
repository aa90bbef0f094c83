"""The smoke suite's cases are named after the server they test (`127.0.0.1:8000/mcp::test_widget_renders[...]`),
not after the temporary folder `appsdk test` copies this suite into."""

import pytest

from appsdk_cli.testing.smoke import server_name


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    if module_path.name != "test_widgets.py":
        return None
    config = parent.config
    name = server_name(config.getoption("appsdk_url"), config.getoption("appsdk_stdio"))
    return pytest.Module.from_parent(parent, path=module_path, nodeid=name)
