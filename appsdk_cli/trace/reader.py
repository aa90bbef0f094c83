"""Reading trace files without holding them: records streamed one line at a time, or indexed by where
each line starts so that a record (its message body with it) is read from the file only when asked for.

A trace of 100,000 tools/call-sized records is about 300 MB of JSON; as Python objects it is ten times
that. `iter_trace` holds one line at a time; `TraceIndex` holds 16 bytes per record.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from appsdk_cli.trace.record import TraceFormatError, parse_line


def _open(path: Path) -> IO[bytes]:
    try:
        return path.open("rb")
    except OSError as problem:
        raise TraceFormatError(f"cannot read the trace {path}: {problem.strerror or problem}") from None


def _blank(line: bytes) -> bool:
    # isspace() stops at a record's first character; strip() would copy every line.
    return not line or line.isspace()


def iter_trace(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a trace file, in order, read one line at a time (blank lines skipped)."""
    path = Path(path)
    with _open(path) as lines:
        for number, line in enumerate(lines, start=1):
            if not _blank(line):
                yield parse_line(line, number)  # json.loads reads UTF-8 bytes as they are


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Every record of a trace file as a list: for small traces (tests); large ones are for iter_trace."""
    return list(iter_trace(path))


class TraceIndex:
    """A trace file's records by position, bodies left in the file.

    Building it reads the file once, checking every line is a record and noting where it starts and its
    line number (16 bytes a record). `summary(n)` / `page(start, count)` give what a row shows (a record
    without its `message`); `record(n)` reads one whole record, message included, from the file.

        index = TraceIndex("trace.jsonl")
        rows = index.page(0, 50)
        opened = index.record(3)["message"]
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._starts = array("q")
        self._numbers = array("q")  # each record's line number, for errors that name it
        offset = 0
        with _open(self.path) as lines:
            for number, line in enumerate(lines, start=1):
                if not _blank(line):
                    parse_line(line, number)
                    self._starts.append(offset)
                    self._numbers.append(number)
                offset += len(line)

    def __len__(self) -> int:
        return len(self._starts)

    def record(self, position: int) -> dict[str, Any]:
        """The whole record at `position` (0 is the first; negative counts from the end), read now."""
        return self._read(position, 1)[0]

    def summary(self, position: int) -> dict[str, Any]:
        """The record at `position` without its message (what a row of a timeline shows)."""
        return self.page(position, 1)[0]

    def page(self, start: int, count: int) -> list[dict[str, Any]]:
        """Up to `count` records from `start` on, without their messages, read in one pass."""
        records = self._read(start, count)
        for record in records:
            record.pop("message", None)
        return records

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter_trace(self.path)

    def _read(self, start: int, count: int) -> list[dict[str, Any]]:
        total = len(self._starts)
        if start < 0:
            start += total
        if not 0 <= start < total:
            raise IndexError(f"the trace has {total} records; there is none at {start}")
        end = min(total, start + max(count, 0))
        records = []
        with _open(self.path) as lines:
            lines.seek(self._starts[start])
            for position in range(start, end):
                line = lines.readline()
                while _blank(line):  # a blank line between records
                    line = lines.readline()
                    if not line:
                        raise TraceFormatError(f"the trace {self.path} changed since it was indexed")
                records.append(parse_line(line, self._numbers[position]))
        return records
