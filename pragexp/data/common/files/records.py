"""What every reader of a release's JSON records checks first: the record is an object holding its fields,
each of its type, or the reader's `fail(field, message)` says which (a `DataFormatError` naming the file, the
record and the field: the reader builds it, since each release names its records its own way)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NoReturn


def require_fields(raw, fields: Mapping[str, type | None], fail: Callable[[str, str], NoReturn]) -> dict:
    """`raw` as a dict, once it is an object with every field of `fields`, each an instance of its type (None:
    any type; an int field never takes a bool, as JSON's `true` would pass for 1)."""
    if not isinstance(raw, dict):
        fail("*", f"expected an object, found {type(raw).__name__}")
    for field, kind in fields.items():
        if field not in raw:
            fail(field, "missing")
        value = raw[field]
        if kind is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
            fail(field, f"expected {kind.__name__}, found {value!r}")
    return raw
