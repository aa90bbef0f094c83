"""Which Host and Origin headers the dev server accepts (DNS-rebinding protection). Pure functions."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from appsdk_cli import netloc
from appsdk_cli.errors import UsageError

# A loopback name is no DNS-rebinding risk whatever the port (netloc says why the bare names are there).
LOCAL_HOSTS = netloc.LOOPBACK_HOST_PATTERNS
LOCAL_ORIGINS = netloc.LOOPBACK_ORIGIN_PATTERNS
WILDCARD_BINDS = ("0.0.0.0", "::", "")


@dataclass(frozen=True)
class HostRule:
    """The Host patterns and Origins that one allowed name adds."""

    hosts: tuple[str, ...]
    origins: tuple[str, ...]


def parse_allowed_host(value: str) -> HostRule:
    """`name` admits any port (`name:*`) and no port at all (tunnels send a bare Host);
    `name:8443` or `name:*` is taken as written. A URL is accepted for its host part."""
    raw = value.strip()
    if "://" in raw:
        parts = urlsplit(raw)
        if parts.path not in ("", "/") or parts.query or not parts.netloc:
            raise UsageError(f"--allow-host {value!r}: give a host name such as abc.ngrok.app, not a URL with a path")
        raw = parts.netloc
    if not raw or any(c in raw for c in " /\\@?#,"):
        raise UsageError(f"--allow-host {value!r} is not a host name; give one such as abc.ngrok.app")
    name, port = _split_port(raw)
    if not name:
        raise UsageError(f"--allow-host {value!r} has no host name")
    if port is None:
        hosts = (f"{name}:*", name)
        origins = (f"https://{name}", f"http://{name}", f"https://{name}:*", f"http://{name}:*")
    else:
        hosts = (f"{name}:{port}",)
        origins = (f"https://{name}:{port}", f"http://{name}:{port}")
    return HostRule(hosts, origins)


def _split_port(raw: str) -> tuple[str, str | None]:
    if raw.startswith("["):  # [::1]:8000
        close = raw.find("]")
        if close < 0:
            raise UsageError(f"--allow-host {raw!r}: an IPv6 address needs its closing ]")
        name, rest = raw[: close + 1], raw[close + 1 :]
        if not rest:
            return name, None
        if not rest.startswith(":"):
            raise UsageError(f"--allow-host {raw!r} is not a host name")
        return name, _check_port(raw, rest[1:])
    if raw.count(":") == 1:
        name, port = raw.split(":")
        return name, _check_port(raw, port)
    if ":" in raw:  # a bare IPv6 address
        return f"[{raw}]", None
    return raw, None


def _check_port(raw: str, port: str) -> str:
    if port == "*" or (port.isdigit() and 0 < int(port) < 65536):
        return port
    raise UsageError(f"--allow-host {raw!r}: the port must be a number or *")


def security_lists(bind_host: str, extra: tuple[str, ...] = ()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Allowed Host patterns and Origins: loopback always, the bind address itself, then each --allow-host."""
    hosts = list(LOCAL_HOSTS)
    origins = list(LOCAL_ORIGINS)
    if bind_host not in WILDCARD_BINDS and bind_host not in netloc.SDK_LOOPBACK_NAMES:
        # An address typed into --host is how clients will reach it; an IP literal in Host is no rebinding risk.
        extra = (bind_host, *extra)
    for value in extra:
        rule = parse_allowed_host(value)
        hosts += [h for h in rule.hosts if h not in hosts]
        origins += [o for o in rule.origins if o not in origins]
    return tuple(hosts), tuple(origins)


def url_host(host: str) -> str:
    """The host as it appears in a URL: IPv6 in brackets, and a wildcard bind shown as loopback."""
    if host in WILDCARD_BINDS:
        return "127.0.0.1" if host != "::" else "[::1]"
    return f"[{host}]" if ":" in host else host
