"""The two consoles and the few lines every command prints the same way (errors, notices, warnings)."""

from __future__ import annotations

import json
import re
import signal
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rich.console import Console

    from appsdk_cli.errors import AppsdkError


# Characters a terminal obeys rather than shows: C0 controls but tab and newline, DEL, the C1 block
# (0x9b is a one-byte CSI), and the bidirectional overrides that make text read other than it is.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """Text from a server as a terminal should show it: escape sequences (OSC 52 clipboard writes,
    hyperlinks, screen clears) become visible `\\x1b`-style text instead of acting. --json stays exact."""
    return _CONTROLS.sub(_shown, text)


def escape(text: str) -> str:
    """Untrusted text for a rich markup string: markup brackets and terminal controls both neutralised.

    Every renderer uses this one, never rich.markup.escape directly."""
    from rich.markup import escape as escape_markup

    return escape_markup(printable(text))


def stdout() -> Console:
    from rich.console import Console

    return Console(highlight=False)


def stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def say(console: Console, markup: str) -> None:
    """A line that may be long: on a terminal wrapped at a word to its width (the terminal itself would cut
    it anywhere, mid-word), in a log or a pipe kept whole, one line a grep finds."""
    console.print(markup, soft_wrap=not console.is_terminal)


def json_line(value: Any) -> None:
    """One JSON document on one line of stdout, for scripts."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def error(problem: AppsdkError, *, verbose: bool = False) -> None:
    console = stderr()
    console.print(f"[bold red]error:[/] {escape(problem.message)}", soft_wrap=True)
    if verbose and problem.detail:
        console.print(escape(problem.detail), soft_wrap=True)


def notice(message: str) -> None:
    """A step the user should know about (a sign-in opening the browser), on stderr so --json stays clean."""
    stderr().print(f"[dim]{escape(message)}[/]", soft_wrap=True)


def warning(message: str) -> None:
    stderr().print(f"[yellow]warning:[/] {escape(message)}", soft_wrap=True)


def count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


@contextmanager
def spinner(message: str, *, log: bool = False, heartbeat: float = 15.0) -> Iterator[None]:
    """A spinner on stderr while something slow runs; stdout stays clean for --json.

    A spinner draws only on a terminal. With `log`, for work that takes half a minute, a log (CI, a pipe)
    gets the message as a line, a line every `heartbeat` seconds while it lasts, and how long it took."""
    console = stderr()
    if console.is_terminal or not log:
        with console.status(message):
            yield
        return
    import threading
    import time

    started = time.monotonic()
    done = threading.Event()

    def beat() -> None:
        while not done.wait(heartbeat):
            console.print(f"  … still working ({time.monotonic() - started:.0f} s)", highlight=False)

    console.print(f"{message}…", highlight=False, soft_wrap=True)
    beater = threading.Thread(target=beat, name="spinner-heartbeat", daemon=True)
    beater.start()
    try:
        yield
    finally:
        done.set()
        beater.join()
    console.print(f"  done in {time.monotonic() - started:.1f} s", highlight=False)


@contextmanager
def stopping_on_sigterm() -> Iterator[None]:
    """Treat SIGTERM and SIGHUP (the terminal closed, an SSH session dropped) like Ctrl-C, so the same
    cleanup runs for all three."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {number: signal.signal(number, interrupt) for number in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
