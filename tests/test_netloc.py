"""netloc: which hosts, URLs, Host and Origin headers each named function admits, and which it refuses."""

from __future__ import annotations

import pytest

from appsdk_cli import netloc

# host: (is_loopback_address, is_loopback_host, reaches_127_0_0_1, is_this_machine)
HOSTS = {
    "127.0.0.1": (True, True, True, True),
    "127.0.0.2": (True, True, False, True),
    "127.255.255.254": (True, True, False, True),
    "::1": (True, True, False, True),
    "[::1]": (True, True, False, True),
    "::ffff:127.0.0.1": (True, True, True, True),
    "[::ffff:127.0.0.1]": (True, True, True, True),
    "::ffff:7f00:2": (True, True, False, True),
    "localhost": (False, True, True, True),
    "LOCALHOST": (False, True, True, True),
    "LocalHost": (False, True, True, True),
    "app.localhost": (False, False, False, True),
    "a.b.LOCALHOST": (False, False, False, True),
    "0.0.0.0": (False, False, False, True),
    "::": (False, False, False, True),
    "[::]": (False, False, False, True),
    # DNS names that resolve to loopback are what a rebinding attacker controls.
    "localhost.evil.com": (False, False, False, False),
    "127.0.0.1.nip.io": (False, False, False, False),
    "evil-localhost": (False, False, False, False),
    ".localhost": (False, False, False, False),
    "localhost.": (False, False, False, False),
    "127.1": (False, False, False, False),
    "2130706433": (False, False, False, False),
    "128.0.0.1": (False, False, False, False),
    "10.0.0.1": (False, False, False, False),
    "::2": (False, False, False, False),
    "::ffff:10.0.0.1": (False, False, False, False),
    "example.com": (False, False, False, False),
    "": (False, False, False, False),
}


@pytest.mark.parametrize(("host", "expected"), HOSTS.items(), ids=lambda v: repr(v) if isinstance(v, str) else "")
def test_each_host_rule_admits_what_its_docstring_says(host: str, expected: tuple[bool, bool, bool, bool]):
    actual = (
        netloc.is_loopback_address(host),
        netloc.is_loopback_host(host),
        netloc.reaches_127_0_0_1(host),
        netloc.is_this_machine(host),
    )
    assert actual == expected


@pytest.mark.parametrize(
    ("url", "admitted"),
    [
        ("http://127.0.0.1:5173/", True),
        ("http://localhost/cb", True),
        ("HTTP://LOCALHOST:8000/x", True),
        ("http://[::1]:8000/mcp", True),
        ("http://127.0.0.9/cb", True),
        ("https://127.0.0.1/", False),  # not plain http: another question
        ("http://app.localhost:5173/", False),
        ("http://0.0.0.0:5173/", False),
        ("http://localhost.evil.com/", False),
        ("http://127.0.0.1.nip.io/", False),
        ("http://evil.com@127.0.0.1.nip.io/", False),
        ("http://[::1/", False),
        ("ftp://127.0.0.1/", False),
        ("127.0.0.1:8000", False),
    ],
)
def test_is_loopback_url(url: str, admitted: bool):
    assert netloc.is_loopback_url(url) is admitted


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("127.0.0.1:8000", ("127.0.0.1", 8000)),
        ("LOCALHOST", ("localhost", None)),
        ("[::1]:8000", ("::1", 8000)),
        ("[::1]", ("::1", None)),
        ("::1", None),
        ("[::1", None),
        ("[::1]8000", None),
        ("localhost:", None),
        ("localhost:0", None),
        ("localhost:65536", None),
        ("localhost:http", None),
        ("evil.com@localhost", None),
        ("", None),
    ],
)
def test_split_host_header(value: str, parsed: tuple[str, int | None] | None):
    assert netloc.split_host_header(value) == parsed


@pytest.mark.parametrize(
    ("value", "port", "admitted"),
    [
        ("127.0.0.1:8000", 8000, True),
        ("localhost:8000", 8000, True),
        ("LOCALHOST:8000", 8000, True),
        ("[::1]:8000", 8000, True),
        ("127.0.0.2:8000", 8000, True),
        ("[::ffff:127.0.0.1]:8000", 8000, True),
        ("127.0.0.1", 80, True),  # a client leaves the default port out
        ("127.0.0.1", 8000, False),
        ("127.0.0.1:8001", 8000, False),
        ("localhost", None, True),
        ("[::1]:1234", None, True),
        ("app.localhost:8000", 8000, False),
        ("0.0.0.0:8000", 8000, False),
        ("localhost.evil.com:8000", 8000, False),
        ("127.0.0.1.nip.io:8000", 8000, False),
        ("evil.example:80", 80, False),
        ("::1", None, False),
        ("", None, False),
    ],
)
def test_allowed_host_header(value: str, port: int | None, admitted: bool):
    assert netloc.allowed_host_header(value, port) is admitted


@pytest.mark.parametrize(
    ("origin", "admitted"),
    [
        ("http://127.0.0.1:8000", True),
        ("http://localhost:8000", True),
        ("http://LOCALHOST:8000", True),
        ("http://[::ffff:127.0.0.1]:8000", True),
        ("http://[::1]:8000", False),  # another socket, which another process may hold
        ("http://127.0.0.2:8000", False),
        ("http://127.0.0.1:8001", False),
        ("http://127.0.0.1", False),
        ("https://127.0.0.1:8000", False),
        ("http://127.0.0.1:8000/", False),
        ("http://app.localhost:8000", False),
        ("http://0.0.0.0:8000", False),
        ("http://localhost.evil.com:8000", False),
        ("http://127.0.0.1.nip.io:8000", False),
        ("http://evil.example", False),
        ("http://user@127.0.0.1:8000", False),
        ("http://127.0.0.1:99999", False),
        ("null", False),
        ("", False),
        (None, False),
    ],
)
def test_allowed_origin(origin: str | None, admitted: bool):
    assert netloc.allowed_origin(origin, 8000) is admitted


def test_the_default_port_origin_carries_no_port():
    assert netloc.allowed_origin("http://127.0.0.1", 80)
    assert not netloc.allowed_origin("http://127.0.0.1:8000", 80)


def test_the_sdk_patterns_list_each_sdk_name_with_and_without_a_port():
    for name in netloc.SDK_LOOPBACK_NAMES:
        shown = f"[{name}]" if ":" in name else name
        assert {f"{shown}:*", shown} <= set(netloc.LOOPBACK_HOST_PATTERNS)
        assert {f"http://{shown}:*", f"http://{shown}"} <= set(netloc.LOOPBACK_ORIGIN_PATTERNS)
        assert netloc.is_loopback_host(name)
