"""What a data module's settings say of its data, for run.json (`pragexp.runs.record.DataRecord`): the files
by split, by name, and whether they are the release's own. A data module's `declared(settings)` builds on
these; the settings are its config's values (`pragexp.training.declaration` hands them over as the run
composed them), so a data module is described from its settings alone, without reading its data.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatch
from pathlib import Path

from pragexp.utils.io import as_paths

SPLITS = ("train", "val", "test")


def file_names(value) -> list[str]:
    """A data location's file names (no directories): one path, a list of paths, or none."""
    return [Path(str(p).rstrip("/")).name for p in as_paths(value) if str(p)]


def split_files(settings: Mapping, single: str = "path") -> dict[str, list[str]]:
    """{split: file names}: `<split>_path` for each split that has one, and `path` as `all` (one file the
    splits are cut from) or, where `single` names a split, as that split's."""
    files = {s: file_names(settings.get(f"{s}_path")) for s in SPLITS}
    files[single if single in SPLITS and not files.get(single) else "all"] = file_names(settings.get("path"))
    return {split: names for split, names in files.items() if names}


def source(files: Mapping[str, list[str]], release: Mapping[str, tuple[str, ...]]) -> str:
    """`hub` without files; `release` where every file's name is one of the release's for its split (glob
    patterns; `*` for any split); else `sample` (a copy or excerpt by another name)."""
    if not files:
        return "hub"
    for split, names in files.items():
        patterns = (*release.get(split, ()), *release.get("*", ()))
        if not all(any(fnmatch(name, p) for p in patterns) for name in names):
            return "sample"
    return "release"


def scalars(settings: Mapping, keys: tuple[str, ...]) -> dict:
    """The settings under `keys` that are set (not None) as JSON scalars; a list becomes a comma-joined
    string."""
    out = {}
    for key in keys:
        value = settings.get(key)
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        if value is not None:
            out[key] = value
    return out
