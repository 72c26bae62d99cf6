"""Where the artifacts live: ``paths.yaml``, the one place a path is written.

dvc.yaml reads the same file (its ``vars``), so a stage's deps and outs and what its code opens cannot drift
apart, and moving an output is one edit. Only stage modules (and the headline writer they call) read it:
library functions take paths as arguments, so they run on any files. ``PATHS.split.report`` is a ``Path``;
``PATHS.quail_mc[variant]`` picks a variant's entries; a name that is not in the file is an error naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

LAYOUT_FILE = Path(__file__).resolve().parents[2] / "paths.yaml"


class LayoutError(KeyError):
    def __str__(self) -> str:  # KeyError's own str() quotes the message
        return str(self.args[0])


class Layout:
    """One level of the ``paths:`` tree; leaves are relative ``Path``s (relative to the project root, where
    ``dvc repro`` runs every stage)."""

    def __init__(self, tree: dict[str, Any], where: str = "paths") -> None:
        self._tree = tree
        self._where = where

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __getitem__(self, name: str) -> Any:
        if name not in self._tree:
            raise LayoutError(f"{LAYOUT_FILE.name} has no {self._where}.{name} (it has: {', '.join(self._tree)})")
        value = self._tree[name]
        if isinstance(value, dict):
            return Layout(value, f"{self._where}.{name}")
        return _inside_checkout(value, f"{self._where}.{name}")

    def keys(self) -> list[str]:
        return list(self._tree)

    def leaves(self) -> dict[str, Path]:
        """Every entry below this level by its dotted name (``paths.split.report``)."""
        out: dict[str, Path] = {}
        for name in self._tree:
            node = self[name]
            out.update(node.leaves() if isinstance(node, Layout) else {f"{self._where}.{name}": node})
        return out


def _inside_checkout(value: Any, where: str) -> Path:
    """A relative path that stays in the checkout: stages write every entry, so ``../x`` or ``/x`` would make
    ``dvc repro`` write outside it (and DVC track a file it does not own)."""
    if not isinstance(value, str) or not value:
        raise LayoutError(f"{LAYOUT_FILE.name}: {where} must be a relative path, got {value!r}")
    path = Path(value)
    if path.is_absolute() or ".." in path.parts or value.startswith("~"):
        raise LayoutError(f"{LAYOUT_FILE.name}: {where} is {value!r}: entries are relative paths inside the "
                          "checkout (no leading '/', '~' or '..')")
    return path


def load_layout(path: Path = LAYOUT_FILE) -> Layout:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("paths"), dict):
        raise LayoutError(f"{path}: expected a mapping under 'paths:'")
    return Layout(data["paths"])


PATHS = load_layout()
