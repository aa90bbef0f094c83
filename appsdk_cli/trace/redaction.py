"""Redaction: secrets never reach a trace record.

Values under keys such as `authorization`, `access_token`, `client_secret` or `password`, `Bearer …`
credentials inside any string, and every value given to `Tracer.add_secret` are replaced by "[redacted]"
before the record is kept, written or handed to a subscriber.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"

# Compared after lower-casing and turning "-" into "_": `Authorization`, `x-api-key` and `client_secret` alike.
SECRET_KEYS = frozenset(
    {
        "authorization",
        "proxy_authorization",
        "cookie",
        "set_cookie",
        "access_token",
        "refresh_token",
        "id_token",
        "token",
        "bearer",
        "client_secret",
        "code_verifier",
        "api_key",
        "apikey",
        "x_api_key",
        "password",
        "secret",
    }
)
# A credential after "Bearer": long and with a digit, so prose ("Bearer of bad news") is left alone.
_BEARER = re.compile(r"\b(Bearer)\s+(?=[A-Za-z0-9\-._~+/]*\d)[A-Za-z0-9\-._~+/]{12,}=*", re.IGNORECASE)


class Redactor:
    """Blanks secrets in one record's values; `hit` tells whether it blanked any."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.hit = False

    def text(self, value: str) -> str:
        redacted = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", value)
        for secret in self.secrets:
            redacted = redacted.replace(secret, REDACTED)
        if redacted != value:
            self.hit = True
        return redacted

    def value(self, value: Any, depth: int = 0) -> Any:
        if depth > 64:
            return value  # a message nested this deep was already refused by the JSON reader
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if isinstance(key, str) and key.lower().replace("-", "_") in SECRET_KEYS and item not in (None, ""):
                    self.hit = True
                    out[key] = REDACTED
                else:
                    out[key] = self.value(item, depth + 1)
            return out
        if isinstance(value, list):
            return [self.value(item, depth + 1) for item in value]
        return value


def redact(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of `value` with secrets blanked (see this module's docstring)."""
    return Redactor(secrets).value(value)
