"""`appsdk test`: the short summary under pytest's own output."""

from __future__ import annotations

from typing import TYPE_CHECKING

from appsdk_cli.render.console import escape, say, stdout

if TYPE_CHECKING:
    from appsdk_cli.testing.run import TestOutcome


def test_summary(outcome: TestOutcome) -> None:
    console = stdout()
    parts = [f"{outcome.passed} passed"] if outcome.passed or not (outcome.failed or outcome.errors) else []
    if outcome.failed:
        parts.append(f"[red]{outcome.failed} failed[/red]")
    if outcome.errors:
        parts.append(f"[red]{outcome.errors} errors[/red]")
    if outcome.skipped:
        parts.append(f"{outcome.skipped} skipped")
    what = "the generated smoke suite" if outcome.smoke else "tests"
    if outcome.pytest_exit == 5:
        say(console, "[red]appsdk test: no tests ran[/red] (no test_*.py found; `appsdk new` writes some)")
        return
    if outcome.pytest_exit == 2 and not (outcome.passed or outcome.failures):
        say(console, "appsdk test: interrupted")
        return
    if outcome.pytest_exit not in (0, 1) and not (outcome.passed or outcome.failures or outcome.skipped):
        # pytest stopped before it counted a test (a usage error, an internal error): its own output says why.
        say(
            console,
            f"[red]appsdk test: pytest stopped before any test ran[/red] (exit {outcome.pytest_exit}; see above)",
        )
        return
    say(console, f"appsdk test ({what}): {', '.join(parts)} in {outcome.seconds:.1f} s")
    for failure in outcome.failures:
        # Once: pytest's FAILURES section above says why, unless it was turned off.
        why = "" if outcome.details else f": {escape(failure.line)}"
        say(console, f"  [red]✗[/red] {escape(failure.test)}{why}")
    if outcome.smoke:  # what a smoke suite left out is part of its answer: which tools went untested, and why
        for skip in outcome.skips:
            say(console, f"  - skipped {escape(skip.test)}: {escape(skip.line)}")
    if outcome.junitxml is not None:
        say(console, f"  JUnit report: {escape(str(outcome.junitxml))}")
