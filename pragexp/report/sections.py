"""The datasets' own report sections: a dataset package's `report_section` module, with `sections(runs)` (markdown
lines), `figures(runs, folder)` (the paths written) and, where its scorecard columns need more than the mean of a
headline metric, `columns(runs)`. Hu et al.'s table per phenomenon, LUDWIG's k curve and the intentions' figures
are such sections."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pragexp.data


def section_modules(runs) -> list[ModuleType]:
    """The report sections of the datasets the runs were made on, in the order of the dataset packages."""
    names = [
        f"{pragexp.data.__name__}.{info.name}.report_section"
        for info in pkgutil.iter_modules(pragexp.data.__path__)
        if info.ispkg and importlib.util.find_spec(f"{pragexp.data.__name__}.{info.name}.report_section")
    ]
    return [importlib.import_module(name) for name in names]


def sections(runs) -> list[str]:
    return [line for module in section_modules(runs) for line in module.sections(runs)]


def figures(runs, folder) -> list:
    return [path for module in section_modules(runs) for path in module.figures(runs, folder)]


def columns(runs) -> list:
    return [c for module in section_modules(runs) if hasattr(module, "columns") for c in module.columns(runs)]
