"""`appsdk plugin pack`: the plugin folder as one zip, checked first, and the same bytes every time.

Reproducible: entries sorted by path, every timestamp 1980-01-01 00:00, permissions 0644 (0755 for an
executable file), one compression level, no extra fields; so the same tree gives the same archive, and
its sha256 identifies the submission. The archive rules (no symlinks, no .., no backslashes, no
.app.json, ≤5000 entries, ≤512 MB expanded, ≤100 MB compressed) are PLUG5xx in rules.py.
"""

from __future__ import annotations

import hashlib
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from appsdk_cli.checks.model import CheckReport
from appsdk_cli.errors import AppsdkError, UsageError
from appsdk_cli.plugin.manifest import discover
from appsdk_cli.plugin.rules import COMPRESSED_LIMIT, EXPANDED_LIMIT, check_plugin
from appsdk_cli.plugin.tree import NotAFile, read_regular, walk_package
from appsdk_cli.safewrite import default_root, replacing

FIXED_TIME = (1980, 1, 1, 0, 0, 0)
COMPRESSION_LEVEL = 9
DEFAULT_OUTPUT = "dist"


@dataclass(frozen=True)
class PackResult:
    report: CheckReport
    archive: Path | None = None  # None when the check failed and nothing was written
    entries: int = 0
    expanded: int = 0
    compressed: int = 0
    sha256: str = ""


def archive_bytes_into(handle: BinaryIO, root: Path, files: list[PurePosixPath]) -> int:
    """Write the zip to a handle safewrite opened; return the bytes before compression."""
    expanded = 0
    with zipfile.ZipFile(handle, "w") as archive:
        for relative in files:
            source = root / relative
            data = read_regular(source, root=root, limit=EXPANDED_LIMIT + 1)
            expanded += len(data)
            entry = zipfile.ZipInfo(relative.as_posix(), date_time=FIXED_TIME)
            entry.create_system = 3  # Unix, so the permission bits below are read
            executable = source.stat().st_mode & stat.S_IXUSR
            entry.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
            archive.writestr(entry, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=COMPRESSION_LEVEL)
    return expanded


def pack_plugin(root: Path, *, output: Path | None = None, strict: bool = False) -> PackResult:
    root = root.resolve()
    report = check_plugin(root, strict=strict)
    # Every archive rule blocks a pack, even the one (.app.json) that is only a warning for Codex itself.
    if report.failed or any(f.rule.id.startswith("PLUG5") for f in report.findings):
        return PackResult(report)
    manifest = discover(root).data
    out_dir = (output if output is not None else root / DEFAULT_OUTPUT).resolve()
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"-o {out_dir} is a file; give a folder for the archive")
    files = walk_package(root, skip={out_dir}).files
    archive = out_dir / f"{manifest['name']}-{manifest['version']}.zip"
    # The default dist/ stays inside the plugin; a folder named with -o is the user's choice.
    allowed = root if output is None else default_root(out_dir)
    try:
        with replacing(archive, root=allowed) as handle:
            expanded = archive_bytes_into(handle, root, files)
            compressed = handle.tell()
            if compressed > COMPRESSED_LIMIT:
                raise AppsdkError(
                    f"the archive is {compressed / 1_048_576:.0f} MB compressed, over the 100 MB limit; "
                    "keep data and build output out of the plugin folder"
                )
    except NotAFile as refusal:  # swapped since the check: one line, nothing packed
        raise AppsdkError(f"a file in {root} {refusal} since it was checked; nothing was packed") from None
    except OSError as error:
        raise AppsdkError(f"cannot write {archive}: {error.strerror or error}") from error
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    return PackResult(report, archive, len(files), expanded, compressed, digest)
