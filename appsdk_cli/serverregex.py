"""The one matcher for regular expressions a server supplies: JSON Schema `pattern` and `patternProperties`.

Python's `re` backtracks: `^(a|a)*$` against thirty `a`s and a `b` runs for minutes, holding the GIL, so
neither `--timeout` nor any other thread can stop it. RE2 (google-re2) matches in time linear in the text
whatever the pattern. What RE2 cannot express (lookaround, backreferences) is `Unsupported`, and its
callers say "pattern not checked" rather than match it some slower way: there is no fallback to `re`.

Compiling is bounded too: RE2 refuses repetitions above 1000 and programs above MAX_PROGRAM_BYTES.
"""

from __future__ import annotations

import functools
from typing import Any

MAX_PROGRAM_BYTES = 8 << 20  # RE2's own default: a pattern whose program is bigger is refused
UNSUPPORTED = "pattern not checked: unsupported by the linear-time engine"


class Unsupported(Exception):
    """A pattern RE2 will not compile; `str()` is one line that names it and says it was not checked."""


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches somewhere in `text` (JSON Schema's `pattern` is unanchored), in linear time.

    Raises Unsupported for a pattern RE2 cannot compile."""
    if not isinstance(pattern, str):
        raise Unsupported(f"{UNSUPPORTED} ({_shown(str(pattern))}: not a string)")
    compiled = _compiled(pattern)
    try:
        return compiled.search(text) is not None
    except UnicodeEncodeError:
        # A lone surrogate (JSON's "\ud800") has no UTF-8, which RE2 reads: it matches as U+FFFD would.
        readable = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return compiled.search(readable) is not None


def _compiled(pattern: str) -> Any:
    outcome = _compile(pattern)
    if isinstance(outcome, Unsupported):
        raise Unsupported(str(outcome))  # a new one each time: the kept one gathers no tracebacks
    return outcome


# A refusal is kept like a program (lru_cache keeps no exception): a hostile schema's one unsupported
# pattern, tried against every key of an instance, is compiled once.
@functools.lru_cache(maxsize=256)
def _compile(pattern: str) -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print every refusal on stderr; the caller says it in one line
    options.max_mem = MAX_PROGRAM_BYTES
    try:
        return re2.compile(pattern, options)
    except re2.error as problem:
        return Unsupported(f"{UNSUPPORTED} ({_shown(pattern)}: {_reason(problem)})")


def _reason(problem: Exception) -> str:
    said = problem.args[0] if problem.args else problem
    if isinstance(said, bytes):
        said = said.decode("utf-8", "replace")
    return str(said)[:120]


def _shown(pattern: str) -> str:
    text = repr(pattern)
    return text if len(text) <= 80 else text[:77] + "..."
