"""Random input never kills `appsdk app-server`: after any of it, a valid request is still answered."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from appserver import AppServerProcess
from conftest import AppsHome, Fleet, dead_url
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=30,
)
methods = st.sampled_from(["initialize", "initialized", "app/installed", "app/list", "app/read", "app/x", ""])
param_values = st.dictionaries(
    st.sampled_from(["appIds", "includeTools", "threadId", "cursor", "limit", "forceRefresh", "forceRefetch"]),
    json_values
    | st.lists(st.sampled_from(["alpha", "ghost", "zz"]), max_size=4)
    | st.sampled_from(["0", "1", "2", "-1", "x"]),
    max_size=4,
)
# Messages that look like requests reach the handlers; the rest exercises the line parser.
messages = st.one_of(
    st.fixed_dictionaries(
        {"method": methods},
        optional={"id": st.integers() | st.text(max_size=8) | json_values, "params": param_values | json_values},
    ).map(json.dumps),
    json_values.map(json.dumps),
    st.binary(max_size=60).map(lambda data: data.replace(b"\n", b" ").decode("latin-1")),
)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory, fleet: Fleet) -> Iterator[AppServerProcess]:
    root = tmp_path_factory.mktemp("fuzz")
    home = AppsHome(root / "home", root / "work")
    home.home.mkdir()
    home.cwd.mkdir()
    home.register({"alpha": fleet.url("alpha"), "ghost": dead_url()})
    server = AppServerProcess(home.home, home.cwd, timeout=2.0)
    server.initialize()
    yield server
    server.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(messages, min_size=1, max_size=6))
def test_random_input_then_a_valid_request_is_answered(fuzzed: AppServerProcess, lines: list[str]):
    for line in lines:
        fuzzed.send(line.replace("\n", " ").encode("utf-8", "surrogatepass"))
    probe = f"probe-{uuid.uuid4()}"
    fuzzed.send({"id": probe, "method": "app/read", "params": {"appIds": ["alpha", "zz"]}})
    answer = fuzzed.wait_for(probe, timeout=30)
    assert answer["result"]["missingAppIds"] == ["zz"]
    assert [app["id"] for app in answer["result"]["apps"]] == ["alpha"]
    assert fuzzed.process.poll() is None
