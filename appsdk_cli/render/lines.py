"""Long reports as one text: lines of (style, text) pieces, styled on a terminal and plain elsewhere.

rich's cost is per renderable (a table row for each of 2,000 changes took 5 s to draw), and even one
text of 10,000 lines costs a third of a second to split into its Text objects when it holds markup;
in a log or a pipe there are no colours to give, so there the text goes out without markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


class Lines:
    """Every piece is shown as text (markup and terminal controls neutralised) on its line: a newline in
    a server's text shows as \\n, so a tool's name cannot forge another line of the report."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.styled = console.is_terminal
        self.lines: list[str] = []

    def add(self, *pieces: tuple[str, str]) -> None:
        from appsdk_cli.render.console import escape, printable

        shown = escape if self.styled else printable
        line = ""
        for style, text in pieces:
            text = shown(text).replace("\n", "\\n")
            line += f"[{style}]{text}[/]" if style and text and self.styled else text
        self.lines.append(line)

    def emit(self) -> None:
        text = "\n".join(self.lines)
        if self.styled:
            self.console.print(text, soft_wrap=True)
        else:
            # Through rich all the same, without markup (43 ms for 10,000 lines): a report printed inside
            # a `with console:` block then keeps its place behind the lines buffered before it.
            self.console.print(text, markup=False, highlight=False, emoji=False, soft_wrap=True)
