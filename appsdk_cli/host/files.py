"""The local file store behind window.openai's file APIs, and `openai/fileParams` arguments as file objects.

ChatGPT keeps what a widget uploads (`uploadFile`, `selectFiles`) and hands out download URLs for it
(`getFileDownloadUrl`); a tool that lists a parameter in `_meta["openai/fileParams"]` receives that
argument as `{download_url, file_id, mime_type, file_name}`. The preview does the same against a
temporary directory: each upload gets an unguessable id, its bytes are served from the sandbox's files
origin at `/files/<id>` (sandbox.py; the widget's CSP allows exactly that path), and `file_arguments()`
rewrites a call's arguments on every path that calls a tool (the widget's callTool, the workbench's runs).
A name and a type come from the widget: only a plain `type/subtype` is kept, and no control character.
"""

from __future__ import annotations

import mimetypes
import re
import secrets
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appsdk_cli.safewrite import write_file

FILE_PARAMS_KEY = "openai/fileParams"
MAX_FILE_BYTES = 6 * 1024 * 1024  # the host posts an upload as base64 JSON, under the server's 8 MiB body cap
_ID = re.compile(r"^file_[0-9a-f]{32}$")
_MIME = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def clean_mime_type(value: str | None, file_name: str) -> str:
    """The type a file is served as: a plain `type/subtype` (parameters dropped), else one guessed from its
    name, else application/octet-stream. Never anything that could carry a header of its own."""
    given = (value or "").split(";")[0].strip()
    if _MIME.match(given):
        return given.lower()
    return mimetypes.guess_type(file_name)[0] or "application/octet-stream"


@dataclass(frozen=True)
class StoredFile:
    file_id: str
    file_name: str
    mime_type: str
    size: int
    path: Path

    def as_argument(self, download_url: str) -> dict[str, str]:
        """The object a fileParams tool receives (ChatGPT's field names)."""
        return {
            "download_url": download_url,
            "file_id": self.file_id,
            "mime_type": self.mime_type,
            "file_name": self.file_name,
        }

    def describe(self, download_url: str) -> dict[str, Any]:
        """What the host page and the workbench show of a stored file."""
        return {
            "fileId": self.file_id,
            "fileName": self.file_name,
            "mimeType": self.mime_type,
            "size": self.size,
            "downloadUrl": download_url,
        }


class FileStore:
    """Uploads kept under one temporary directory, removed on close(). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, StoredFile] = {}
        self._dir: Path | None = None

    def _directory(self) -> Path:
        # Created on the first upload: most previews never store a file.
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="appsdk-files-"))
        return self._dir

    def add(self, file_name: str, data: bytes, mime_type: str | None = None) -> StoredFile:
        if len(data) > MAX_FILE_BYTES:
            raise ValueError(f"the file is {len(data)} bytes; the preview stores files up to {MAX_FILE_BYTES} bytes")
        name = _CONTROL.sub("", Path(file_name.replace("\\", "/")).name).strip() or "file"
        mime = clean_mime_type(mime_type, name)
        file_id = f"file_{secrets.token_hex(16)}"
        with self._lock:
            path = self._directory() / file_id
            write_file(path, data, root=path.parent, mode=0o600, sync=False)
            stored = StoredFile(file_id=file_id, file_name=name[:255], mime_type=mime[:255], size=len(data), path=path)
            self._files[file_id] = stored
        return stored

    def get(self, file_id: str) -> StoredFile | None:
        if not isinstance(file_id, str) or not _ID.match(file_id):
            return None
        with self._lock:
            return self._files.get(file_id)

    def files(self) -> list[StoredFile]:
        with self._lock:
            return list(self._files.values())

    def close(self) -> None:
        with self._lock:
            directory, self._dir = self._dir, None
            self._files.clear()
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)


def download_url(files_origin: str, file_id: str) -> str:
    return f"{files_origin}/files/{file_id}"


def files_source(files_origin: str) -> str:
    """The CSP source that lets a widget fetch (and show) the store's files and nothing else."""
    return f"{files_origin}/files/"


def file_params(tool_definition: dict[str, Any] | None) -> list[str]:
    """The parameter names a tool declares in `_meta["openai/fileParams"]` (tools/list's definition)."""
    meta = (tool_definition or {}).get("_meta")
    names = meta.get(FILE_PARAMS_KEY) if isinstance(meta, dict) else None
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def _file_id(value: Any) -> str | None:
    # What a caller may pass for a file: its id, or an object naming it (the widget's {fileId} from
    # uploadFile, or a file object already in ChatGPT's shape).
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        found = value.get("file_id", value.get("fileId"))
        return found if isinstance(found, str) else None
    return None


def file_arguments(
    tool_definition: dict[str, Any] | None, arguments: dict[str, Any], store: FileStore, files_origin: str
) -> dict[str, Any]:
    """`arguments` with each fileParams argument turned into `{download_url, file_id, mime_type, file_name}`,
    as ChatGPT passes them. A value naming no stored file is a ValueError (one line, for the caller to show);
    a list of files becomes a list of objects."""
    names = file_params(tool_definition)
    if not names:
        return arguments
    resolved = dict(arguments)

    def one(name: str, value: Any) -> dict[str, str]:
        file_id = _file_id(value)
        stored = store.get(file_id) if file_id else None
        if stored is None:
            raise ValueError(
                f"argument {name!r} is a file parameter (openai/fileParams) but {str(value)[:80]!r} names no uploaded"
                " file; upload it first (window.openai.uploadFile, or the workbench's file field)"
            )
        return stored.as_argument(download_url(files_origin, stored.file_id))

    for name in names:
        if name not in resolved or resolved[name] is None:
            continue
        value = resolved[name]
        resolved[name] = [one(name, item) for item in value] if isinstance(value, list) else one(name, value)
    return resolved
