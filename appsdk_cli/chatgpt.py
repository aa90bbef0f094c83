"""How a development server gets into ChatGPT: said once, here, and printed everywhere it is needed.

`appsdk tunnel`, `appsdk dev` (its panel and the "the tool list changed" line), the scaffolds' READMEs
(rendered by `appsdk new`) and appsdk's own README (a test keeps it in step) all read these lines, so
the steps cannot drift apart when ChatGPT moves a setting again. The text is Markdown: `**label**` is a
control in ChatGPT's interface; `plain()` and `rich()` turn it into terminal text.
"""

from __future__ import annotations

import re

PLUGINS_PAGE = "chatgpt.com/plugins"
REFRESH = f"press **Refresh** on the plugin at {PLUGINS_PAGE}"

_BOLD = re.compile(r"\*\*(.+?)\*\*")


def steps(url: str = "your public `https://…/mcp` URL", *, sign_in: bool = False) -> tuple[str, ...]:
    """The numbered steps, Markdown, with `url` naming where the server is (e.g. "the MCP URL above")."""
    create = "Choose **Create as a plugin**"
    if sign_in:
        create += "; ChatGPT reads the server's sign-in metadata, registers itself and shows the sign-in page"
    return (
        "Turn on developer mode: in ChatGPT, **Settings → Security and login → Developer mode**.",
        f"Open {PLUGINS_PAGE}, press **+** → **Add custom MCP server**, and enter {url} (or choose **Tunnel**).",
        f"{create}. Then, in a chat, pick the plugin and ask it something.",
        f"ChatGPT keeps a snapshot of your tools: after a tool's name, schema or metadata changes, {REFRESH}.",
    )


def markdown(url: str = "your public `https://…/mcp` URL", *, sign_in: bool = False) -> str:
    """The steps as a numbered Markdown list (the READMEs)."""
    return "\n".join(f"{number}. {step}" for number, step in enumerate(steps(url, sign_in=sign_in), 1))


def plain(text: str) -> str:
    """Markdown emphasis and code marks dropped: for a terminal without styles (or a --help text)."""
    return _BOLD.sub(r"\1", text).replace("`", "")


def rich(text: str) -> str:
    """Rich markup: controls in bold. The text is ours, not a server's, so only `[` needs escaping."""
    return _BOLD.sub(r"[bold]\1[/bold]", text.replace("[", r"\[")).replace("`", "")
