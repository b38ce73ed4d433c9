"""Contracts between rooms: a `Protocol` declares what one side reads from the other, and `require` checks an
object against it at start, naming every member it lacks (instead of an AttributeError deep in a run)."""

from __future__ import annotations

import inspect
from typing import Protocol


class ContractError(TypeError):
    pass


def contract_members(contract: type) -> list[str]:
    """The attributes and methods a `Protocol` declares, its Protocol bases' included."""
    names: dict[str, None] = {}
    for base in reversed(contract.__mro__):
        if getattr(base, "_is_protocol", False) and base is not Protocol:
            names.update(dict.fromkeys(getattr(base, "__annotations__", {})))
            names.update(dict.fromkeys(k for k in vars(base) if not k.startswith("_")))
    return list(names)


def missing_members(obj, contract: type) -> list[str]:
    """The members of `contract` that `obj` lacks (looked up without running properties)."""
    missing = []
    for name in contract_members(contract):
        try:
            inspect.getattr_static(obj, name)
        except AttributeError:
            missing.append(name)
    return missing


def require(obj, contract: type, what: str, hint: str = "") -> None:
    """Raise a `ContractError` naming `what` (e.g. "llm backend 'openai'"), the contract and the members `obj`
    lacks; `hint` says what to use instead."""
    missing = missing_members(obj, contract)
    if missing:
        raise ContractError(
            f"{what} lacks {', '.join(missing)} ({contract.__name__})" + (f": {hint}" if hint else "")
        )
