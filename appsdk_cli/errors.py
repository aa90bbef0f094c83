"""The errors a user can cause. Each carries the one line to print and the exit code to leave with."""

from __future__ import annotations


class AppsdkError(Exception):
    """The operation failed (exit 1): the message is one line that says what to do next."""

    exit_code = 1

    def __init__(self, message: str, *, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        # Shown only with --verbose: a traceback or a server's full answer.
        self.detail = detail


class UsageError(AppsdkError):
    """The command line itself is wrong (exit 2): a bad option, argument or name."""

    exit_code = 2
