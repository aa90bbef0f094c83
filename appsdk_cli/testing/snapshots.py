"""Visual snapshots: a rendered widget against the PNG kept beside the test, in `__snapshots__/`.

    __snapshots__/test_widget/test_the_book_list-chatgpt-dark.png          the reference, committed
    __snapshots__/test_widget/test_the_book_list-chatgpt-dark.actual.png   written on a mismatch
    __snapshots__/test_widget/test_the_book_list-chatgpt-dark.diff.png     the differing pixels in red

Identical bytes pass at once (Chromium encodes the same pixels the same way). Otherwise both images are
decoded and compared in the session's own Chromium, on a blank page: its PNG decoder is native and the
per-pixel loop is JIT-compiled, a few milliseconds for a widget, where decoding in pure Python (zlib and
the PNG filters by hand) takes seconds, and Pillow would be a dependency for this alone. Two pixels
differ when their colour distance (YIQ, as pixelmatch measures it; 0..1) is above `threshold`; the
images match when at most `max_diff_ratio` of the pixels differ, which anti-aliased edges stay under.

A missing reference is written and the test passes, saying so (it is committed like code), except in CI
(CI=true), where a missing reference fails, as jest's snapshots do there: a CI run that writes its own
references compares nothing.
`--update-snapshots` rewrites every reference it renders.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appsdk_cli.safewrite import write_file

FOLDER = "__snapshots__"
_COMPARE = """async ([expected, actual, threshold]) => {
  const load = async (data) => {
    const image = new Image();
    image.src = "data:image/png;base64," + data;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = image.naturalWidth;
    canvas.height = image.naturalHeight;
    const context = canvas.getContext("2d");
    context.drawImage(image, 0, 0);
    return context.getImageData(0, 0, canvas.width, canvas.height);
  };
  const [a, b] = await Promise.all([load(expected), load(actual)]);
  if (a.width !== b.width || a.height !== b.height) {
    return { expected: [a.width, a.height], actual: [b.width, b.height], differing: -1, diff: null };
  }
  const out = document.createElement("canvas");
  out.width = a.width;
  out.height = a.height;
  const context = out.getContext("2d");
  const diff = context.createImageData(a.width, a.height);
  // pixelmatch's YIQ distance; 35215 is the largest it can be.
  const limit = 35215 * threshold * threshold;
  let differing = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    const dr = a.data[i] - b.data[i], dg = a.data[i + 1] - b.data[i + 1], db = a.data[i + 2] - b.data[i + 2];
    const y = dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223;
    const iq = dr * 0.59597799 - dg * 0.2741761 - db * 0.32180189;
    const q = dr * 0.21147017 - dg * 0.52261711 + db * 0.31114694;
    const delta = 0.5053 * y * y + 0.299 * iq * iq + 0.1957 * q * q;
    const grey = 255 - 0.1 * (255 - (a.data[i] * 0.299 + a.data[i + 1] * 0.587 + a.data[i + 2] * 0.114));
    if (delta > limit) {
      differing += 1;
      diff.data.set([255, 0, 0, 255], i);
    } else {
      diff.data.set([grey, grey, grey, 255], i);
    }
  }
  context.putImageData(diff, 0, 0);
  const url = out.toDataURL("image/png");
  const diffPng = url.slice(url.indexOf(",") + 1);
  return { expected: [a.width, a.height], actual: [b.width, b.height], differing, diff: diffPng };
}"""


class SnapshotMismatch(AssertionError):
    """The widget no longer looks like its reference; the actual and diff images are written beside it."""


@dataclass
class SnapshotPolicy:
    """Where one test keeps its references, and what to do when one is missing or differs."""

    folder: Path  # __snapshots__/<test module>
    default_name: str  # the test's name and matrix case, as a file name
    update: bool = False
    ci: bool = False
    # Told of each reference written (the plugin lists them at the end of the run).
    written: Callable[[Path, str], None] = field(default=lambda path, why: None)
    used: set[str] = field(default_factory=set)
    # How a failure is raised (the plugin's: pytest.fail without a traceback); None: SnapshotMismatch.
    fail: Callable[[str], None] | None = None

    def mismatch(self, message: str) -> None:
        if self.fail is not None:
            self.fail(message)
        raise SnapshotMismatch(message)

    @classmethod
    def for_test(cls, test_file: Path, test_name: str, *, update: bool, written: Callable[[Path, str], None]) -> Any:
        return cls(
            folder=test_file.parent / FOLDER / test_file.stem,
            default_name=file_name(test_name),
            update=update,
            ci=os.environ.get("CI", "").lower() not in ("", "0", "false", "no"),
            written=written,
        )


def file_name(text: str) -> str:
    """A test id as a file name: `test_x[chatgpt-dark]` → `test_x-chatgpt-dark`."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return cleaned or "snapshot"


def check_snapshot(
    policy: SnapshotPolicy, png: bytes, page: Any, name: str | None, threshold: float, max_diff_ratio: float
) -> None:
    chosen = file_name(name) if name else policy.default_name
    if chosen in policy.used:
        raise ValueError(f"this test already took a snapshot named {chosen!r}; give each one its own name")
    policy.used.add(chosen)
    reference = policy.folder / f"{chosen}.png"
    actual = policy.folder / f"{chosen}.actual.png"
    diff_path = policy.folder / f"{chosen}.diff.png"
    if policy.update or not reference.exists():
        if not reference.exists() and policy.ci and not policy.update:
            policy.mismatch(
                f"no snapshot {_shown(reference)} to compare with (CI=true); run `appsdk test --update-snapshots`"
                " where the widget looks right, and commit the image"
            )
        write_file(reference, png, root=policy.folder.parent)
        actual.unlink(missing_ok=True)
        diff_path.unlink(missing_ok=True)
        policy.written(reference, "updated" if policy.update else "new")
        return
    expected = reference.read_bytes()
    if expected == png:
        actual.unlink(missing_ok=True)
        diff_path.unlink(missing_ok=True)
        return
    verdict = page.evaluate(
        _COMPARE, [base64.b64encode(expected).decode(), base64.b64encode(png).decode(), float(threshold)]
    )
    width, height = verdict["actual"]
    if verdict["differing"] >= 0:
        ratio = verdict["differing"] / max(1, width * height)
        if ratio <= max_diff_ratio:
            actual.unlink(missing_ok=True)
            diff_path.unlink(missing_ok=True)
            return
        write_file(actual, png, root=policy.folder.parent)
        write_file(diff_path, base64.b64decode(verdict["diff"]), root=policy.folder.parent)
        policy.mismatch(
            f"the widget differs from {_shown(reference)}: {verdict['differing']} pixels ({ratio:.2%}, allowed"
            f" {max_diff_ratio:.2%}); see {actual.name} and {diff_path.name} beside it, or accept it with"
            " `appsdk test --update-snapshots`"
        )
    write_file(actual, png, root=policy.folder.parent)
    diff_path.unlink(missing_ok=True)
    ew, eh = verdict["expected"]
    policy.mismatch(
        f"the widget is {width}×{height} px, {_shown(reference)} is {ew}×{eh}; see {actual.name} beside it,"
        " or accept it with `appsdk test --update-snapshots`"
    )


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
