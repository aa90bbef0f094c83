"""The one rule for "is this this machine": loopback hosts, URLs, Host and Origin headers. Pure, stdlib only.

What can name this machine, and where each counts:

- an IP literal in 127.0.0.0/8 or ::1, also as an IPv4-mapped IPv6 address (::ffff:127.0.0.1), with or
  without the brackets a URL puts around IPv6: `is_loopback_address`;
- the name `localhost`, in any case (/etc/hosts maps it, every resolver knows it): `is_loopback_host`
  adds it, and is the rule for what appsdk itself binds to, listens on, fetches from or is addressed by;
- a name under `.localhost` (RFC 6761 §6.3): browsers answer it with loopback themselves, but an operating
  system's resolver only SHOULD, and could forward it; so it counts only in `is_this_machine`, the rule
  for URLs an app declares (a CSP domain, a script's origin, a plugin's server), where the question is
  "does this work anywhere but on the developer's machine", never for a security decision;
- the unspecified address 0.0.0.0 / :: is "every interface" to a bind, not loopback, so only
  `is_this_machine` admits it (connect() and, until 2024, browsers reached this machine through it).

Never: a DNS name that merely resolves to loopback (`localhost.evil.com`, `127.0.0.1.nip.io`): that is
exactly what a DNS-rebinding attacker controls. Not either: a trailing dot (`localhost.`) or the inet_aton
shorthands (`127.1`, `2130706433`); a browser normalizes those before they reach a header or an Origin.

Headers: `allowed_host_header` (DNS-rebinding protection) admits any loopback host, since none of them is
a name someone else's DNS answers; `allowed_origin` admits only the pages our own 127.0.0.1 listener
serves, since an Origin says who asks, and [::1] or 127.0.0.2 on the same port are other sockets that
another process may hold. `reaches_127_0_0_1` is that narrower rule for a host name.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

# The Host and Origin patterns the MCP SDK's TransportSecuritySettings takes for `appsdk dev` (it matches a
# pattern exactly, or `name:*` for any port). The bare names too: a client drops the default port from
# Host and Origin, so on --port 80 every request says `Host: 127.0.0.1`.
SDK_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
LOOPBACK_HOST_PATTERNS = ("127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]")
LOOPBACK_ORIGIN_PATTERNS = (
    "http://127.0.0.1:*",
    "http://localhost:*",
    "http://[::1]:*",
    "http://127.0.0.1",
    "http://localhost",
    "http://[::1]",
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _bare(host: str) -> str:
    """The host as urlsplit's `.hostname` gives it: lower case, without the brackets around IPv6."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(_bare(host))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # Python before 3.13 calls ::ffff:127.0.0.1 not loopback
    return address


def is_loopback_address(host: str) -> bool:
    """An IP literal in 127.0.0.0/8 or ::1 (IPv4-mapped and bracketed forms too). No names at all."""
    address = _address(host)
    return address is not None and address.is_loopback


def is_loopback_host(host: str) -> bool:
    """A loopback IP literal or `localhost`: a host that reaches this machine whoever resolves it.

    For what appsdk binds to (`appsdk dev --host`), the dev authorization server's own origin and the
    redirect URIs and documents it accepts over plain http, a Vite URL appsdk fetches, and Host headers.
    """
    return _bare(host) == "localhost" or is_loopback_address(host)


def reaches_127_0_0_1(host: str) -> bool:
    """`127.0.0.1` or `localhost`: the names a browser uses for a server that listens on 127.0.0.1 alone.

    Narrower than `is_loopback_host` on purpose: [::1] and 127.0.0.2 are other sockets, which another
    process may hold on the same port. For appsdk's own 127.0.0.1 listeners: the preview's and the
    workbench's pages (their Origin) and the sign-in's callback (the redirect URI it can receive).
    """
    bare = _bare(host)
    return bare == "localhost" or _address(bare) == ipaddress.IPv4Address("127.0.0.1")


def is_this_machine(host: str) -> bool:
    """`is_loopback_host`, a name under .localhost, or the unspecified 0.0.0.0 / ::.

    For rules about URLs an app declares (CSP domains, a widget's script and style origins, a plugin's
    server): any of these works on the developer's machine and nowhere else. Never a security decision.
    """
    bare = _bare(host)
    if bare.endswith(".localhost") and len(bare) > len(".localhost"):
        return True
    address = _address(bare)
    return is_loopback_host(bare) or (address is not None and address.is_unspecified)


def is_inward_host(host: str) -> bool:
    """This machine (`is_this_machine`) or an address of a network it sits in: private ranges, link-local
    (169.254.169.254 answers cloud credentials there), shared and reserved. IP literals and loopback names
    only: a public name that resolves inward is not seen here.

    The hosts a public server's documents must never send appsdk to: from there, only the server knows
    what such a URL reaches, and appsdk would fetch it from inside the user's network."""
    address = _address(host)
    if address is None:
        return is_this_machine(host)
    return not address.is_global or address.is_multicast


def public_https_url(url: str | None) -> str | None:
    """The URL when it is one a host on the internet could be given (https, not this machine), else None:
    what a connector URL is, for rules that derive something from it."""
    if not url or not url.startswith("https://"):
        return None
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return None
    return None if not host or is_this_machine(host) else url


def is_loopback_url(url: str) -> bool:
    """A plain-http URL on a loopback host (`is_loopback_host`): one that appsdk may fetch or accept in
    clear text, since the request never leaves this machine. https URLs are a separate question."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() == "http" and is_loopback_host(parts.hostname or "")


def split_host_header(value: str) -> tuple[str, int | None] | None:
    """(host, port) of a Host header (`name`, `name:port`, `[v6]`, `[v6]:port`); None when malformed.
    The host comes back lower case and without brackets; the port is None when the header has none."""
    value = value.strip()
    if value.startswith("["):
        close = value.find("]")
        if close < 0:
            return None
        host, rest = value[1:close], value[close + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:] if rest else None
    elif value.count(":") == 1:
        host, port = value.split(":")
    elif ":" in value:
        return None  # a bare IPv6 address: a Host header brackets it
    else:
        host, port = value, None
    if not host or any(c in host for c in " /\\@?#"):
        return None
    if port is None:
        return host.lower(), None
    if not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host.lower(), int(port)


def is_forwarding_header(name: str) -> bool:
    """A header a proxy or tunnel adds for the client behind it (`Forwarded`, any `X-Forwarded-*`): a
    request that carries one did not come from this machine, whatever its peer address says."""
    lowered = name.lower()
    return lowered == "forwarded" or lowered.startswith("x-forwarded-")


def allowed_host_header(value: str, port: int | None = None) -> bool:
    """A Host header that names this machine by a loopback host (DNS-rebinding protection); on `port`
    when given (a header without a port means 80).

    Any `is_loopback_host` is admitted: no one else's DNS answers for a loopback literal or `localhost`,
    so a request addressed that way was meant for this machine."""
    parsed = split_host_header(value)
    if parsed is None or not is_loopback_host(parsed[0]):
        return False
    return port is None or (parsed[1] or 80) == port


def allowed_origin(origin: str | None, port: int) -> bool:
    """An Origin header of a page our 127.0.0.1 listener on `port` serves: http://127.0.0.1:PORT or
    http://localhost:PORT, exactly (`reaches_127_0_0_1`). None, `null` or any other origin: refused."""
    if not origin:
        return False
    try:
        parts = urlsplit(origin.strip())
        given = parts.port
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if scheme != "http" or parts.path or parts.query or parts.fragment or "@" in parts.netloc:
        return False
    return reaches_127_0_0_1(parts.hostname or "") and (given or _DEFAULT_PORTS[scheme]) == port


# --- the sandbox's host names ---------------------------------------------------------------------------
# A widget is untrusted: the host serves it from names under `.localhost`, one set per server, so it is
# another *site* than the host page (127.0.0.1) and than every other web app the user runs on loopback
# (cookies and SameSite ignore ports; they do not ignore host names). Browsers answer `*.localhost` with
# loopback themselves (RFC 6761 §6.3), and the host's listener accepts only these exact names.
SANDBOX_HOST_KINDS = ("sandbox", "view", "files")


def sandbox_site_id(server: str) -> str:
    """A short stable id for the server a host shows (its URL, or its command when it has none).

    Stable, so `appsdk dev`'s Vite can admit exactly the view origin that shows its own project's widget;
    a loopback URL counts the same whether it says localhost or 127.0.0.1."""
    import hashlib

    key = server.strip()
    try:
        parts = urlsplit(key)
        if parts.scheme in ("http", "https") and parts.hostname and is_loopback_host(parts.hostname):
            netloc = f"127.0.0.1:{parts.port}" if parts.port else "127.0.0.1"
            key = parts._replace(netloc=netloc).geturl().rstrip("/")
        elif parts.scheme in ("http", "https"):
            key = key.rstrip("/")
    except ValueError:
        pass
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def sandbox_host(kind: str, site_id: str) -> str:
    """`sandbox-ID.localhost` (the proxy frame), `view-ID.localhost` (the widget), `files-ID.localhost`
    (window.openai's uploads, as downloads)."""
    if kind not in SANDBOX_HOST_KINDS:
        raise ValueError(f"unknown sandbox host kind {kind!r}")
    return f"{kind}-{site_id}.localhost"


def view_origin_pattern(site_id: str) -> str:
    """A regular expression for the view origins of one server's widgets, on any port: the only pages
    `appsdk dev`'s Vite answers across origins."""
    return rf"^http://view-{site_id}\.localhost:\d+$"
