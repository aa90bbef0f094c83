"""The host's origin model: what each page is served from, and what may reach what. Written once here.

A widget comes from a server the developer may not have written, so the host treats its HTML as hostile
and gives it nothing it could escape into. Four origins, on two loopback sockets:

    host page   http://127.0.0.1:P                   the host page, its API (/api/*), the workbench
    proxy       http://sandbox-ID.localhost:S/proxy  the spec's sandbox proxy: frames the view, relays
                                                     the messages between it and the host page
    view        http://view-ID.localhost:S/view      the widget document the host page handed the proxy,
                                                     under the resource's CSP
    files       http://files-ID.localhost:S/files/F  window.openai's uploads, as attachments in a CSP
                                                     sandbox, never on the host's origin; the same files
                                                     at http://127.0.0.1:S/files/F for the MCP server,
                                                     whose resolver may not know `*.localhost`

ID is the server's (netloc.sandbox_site_id): each server's widgets are one site of their own, another site
than the host page (127.0.0.1) and than every web app the user runs on a loopback port, since cookies and
SameSite ignore ports but not host names. Browsers answer `*.localhost` with loopback themselves.

What may reach what:
- only the host page's own origin posts to /api/* (handler.BaseHandler: Origin); a widget reaches the host
  only by postMessage, through the proxy, which forwards only between its parent (a host page origin) and
  its own view, and never forwards the proxy's own `ui/notifications/sandbox-*` messages;
- the sandbox socket answers only its three exact names (any other Host: 421), each its own route table;
- the proxy may be framed only by a host page (frame-ancestors), the view only sees the HTML the proxy
  was handed by the host page;
- a file the widget uploaded is served as an attachment under `sandbox` CSP, with nosniff, from its own
  origin: nothing a widget can make the host store runs with any origin's rights.
"""

from __future__ import annotations

from dataclasses import dataclass

from appsdk_cli.netloc import reaches_127_0_0_1, sandbox_host, split_host_header

PROXY, VIEW, FILES = "sandbox", "view", "files"


@dataclass(frozen=True)
class Origins:
    """The host's origins once its two sockets listen."""

    host_port: int
    sandbox_port: int
    site_id: str

    @property
    def host_origin(self) -> str:
        return f"http://127.0.0.1:{self.host_port}"

    @property
    def host_page_origins(self) -> tuple[str, str]:
        """The origins a host page may have: the browser may open it as localhost as well as 127.0.0.1."""
        return (self.host_origin, f"http://localhost:{self.host_port}")

    def sandbox_origin(self, kind: str) -> str:
        return f"http://{sandbox_host(kind, self.site_id)}:{self.sandbox_port}"

    @property
    def proxy_origin(self) -> str:
        return self.sandbox_origin(PROXY)

    @property
    def view_origin(self) -> str:
        return self.sandbox_origin(VIEW)

    @property
    def files_origin(self) -> str:
        """Where the widget reads its uploads (getFileDownloadUrl)."""
        return self.sandbox_origin(FILES)

    @property
    def server_files_origin(self) -> str:
        """Where the MCP server reads them (`openai/fileParams` arguments): an address any resolver knows."""
        return f"http://127.0.0.1:{self.sandbox_port}"

    def sandbox_kind(self, host_header: str) -> str | None:
        """Which of the sandbox socket's names a Host header says (PROXY, VIEW or FILES); None for any
        other name or port, DNS-rebinding names included."""
        parsed = split_host_header(host_header)
        if parsed is None or (parsed[1] or 80) != self.sandbox_port:
            return None
        for kind in (PROXY, VIEW, FILES):
            if parsed[0] == sandbox_host(kind, self.site_id):
                return kind
        return FILES if reaches_127_0_0_1(parsed[0]) else None

    def is_host_page(self, origin: str | None) -> bool:
        """An Origin (or postMessage origin) of one of our host pages."""
        return bool(origin) and origin in self.host_page_origins


def frame_ancestors(origins: Origins) -> str:
    """The CSP directive that lets only our host pages frame a page (the proxy)."""
    return "frame-ancestors " + " ".join(origins.host_page_origins)
