"""Hydra's sweep syntax as Optuna distributions: what `hydra.sweeper.params` and the command line ask for.

- `a,b,c` and `choice(a,b,c)`: one of them (categorical);
- `range(start,stop[,step])`: a step of the range (`stop` left out, as in Python);
- `interval(low,high)`: uniform over [low, high]; `tag(log, interval(...))`: log-uniform; `tag(int, ...)`:
  integers.
Anything else (`key=value`) is fixed: every trial gets it as it is.
"""

from __future__ import annotations

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, Transformer
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

PLAIN = (type(None), bool, int, float, str)


def parse(arguments: list[str]) -> tuple[dict[str, BaseDistribution], dict[str, str]]:
    """(the distributions by key, the fixed values by key, as they are written on the command line)."""
    distributions, fixed = {}, {}
    for override in OverridesParser.create().parse_overrides(arguments):
        key = override.get_key_element()
        if override.is_sweep_override():
            distributions[key] = distribution(override)
        else:
            fixed[key] = override.get_value_element_as_str()
    return distributions, fixed


def distribution(override: Override) -> BaseDistribution:
    value = override.value()
    if override.is_choice_sweep():
        choices = [v if isinstance(v, PLAIN) else Transformer.encode(v) for v in override.sweep_iterator()]
        return CategoricalDistribution(choices)
    if override.is_range_sweep():
        numbers = list(override.sweep_iterator())
        if not numbers:
            raise ValueError(f"{override.input_line}: an empty range")
        step = value.step if len(numbers) > 1 else 1
        if all(isinstance(n, int) for n in numbers):
            return IntDistribution(numbers[0], numbers[-1], step=step)
        return FloatDistribution(numbers[0], numbers[-1], step=step)
    if override.is_interval_sweep():
        log = "log" in value.tags
        if "int" in value.tags:  # Hydra's interval ends are floats, whatever was written
            return IntDistribution(int(value.start), int(value.end), log=log)
        return FloatDistribution(float(value.start), float(value.end), log=log)
    raise ValueError(f"{override.input_line}: a sweep Optuna cannot sample (glob sweeps are not supported)")
