"""MultiPragEval as an evaluation-only data module for an LLM (task=multiprageval).

Every row in every selected language (`languages`) is a test unit. Its `PromptItem` holds the cell as released
(`prompt`: the whole prompt, options included) and the five options' text; the prompt group scores the option
letters (conf/prompt/multiprageval.yaml). Each unit is in several groups at once (the batches' "groups"): its
language, its type, `maxims` where the type is one of Grice's four (the paper's score, the literal control
apart), and the pairs `<language>:<type>` and `<language>:maxims`; so `test/acc/korean:maxims` is the maxims'
mean in Korean, each with its uncertainty. The options' positions are named A-E (`chosen/<letter>`: the share
of units answered with each letter; the release's gold letters come in blocks of twelve, so a model that
always answers one letter shows it). `data_report.json` counts the units per language, type and gold letter.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from pragexp.data.common.prompt_examples import PromptDataModule
from pragexp.data.common.units import unit_ids
from pragexp.data.multiprageval.io import FILE, LANGUAGES, LETTERS, MAXIMS, TYPES, Unit, read_units
from pragexp.prompting import PromptItem
from pragexp.runs.sampling_unit import SamplingUnit

log = logging.getLogger(__name__)
MAXIMS_GROUP = "maxims"


def group_names(languages: Sequence[str]) -> tuple[str, ...]:
    """Languages, types, the maxims together, then each language's types and maxims."""
    per_language = [f"{lang}:{kind}" for lang in languages for kind in (*TYPES, MAXIMS_GROUP)]
    return (*languages, *TYPES, MAXIMS_GROUP, *per_language)


class MultiPragEvalDataModule(PromptDataModule):
    sampling_unit = SamplingUnit(
        "scenario", "a scenario's four language versions adapt one story and share its gold letter"
    )
    dataset = "multiprageval"
    path_split = "test"
    release_files = {"test": (FILE,)}
    declared_keys = ("languages",)
    position_names = LETTERS

    def __init__(
        self,
        path: str | None = None,
        languages: Sequence[str] = LANGUAGES,
        limit: int | None = None,
        report_dir: str | None = None,
        eval_batch_size: int = 16,
        num_workers: int = 0,
    ):
        super().__init__(eval_batch_size, eval_batch_size, num_workers, report_dir, limit)
        self.path, self.languages = path, tuple(languages)
        self.group_names = group_names(self.languages)
        self.units: list[Unit] = []

    @classmethod
    def declared(cls, settings: Mapping):
        return super().declared({**settings, "path": _file_name(settings.get("path"))})

    def setup(self, stage: str | None = None) -> None:
        if self.units:
            return
        if not self.path:
            raise ValueError(
                f"data.path is not set: pass data.path=/path/to/MultiPragEval (the repository, or its {FILE})"
            )
        self.units = read_units(_csv_path(self.path), self.languages)
        scenarios = unit_ids(u.row_id for u in self.units)
        self.datasets["test"] = [
            self._example(i, u, s) for i, (u, s) in enumerate(zip(self.units, scenarios, strict=True))
        ]
        self.write_report(self._report())
        log.info("MultiPragEval: %d units in %s", len(self.units), ", ".join(self.languages))

    def _example(self, index: int, unit: Unit, scenario: int) -> dict:
        names = [unit.language, unit.type, f"{unit.language}:{unit.type}"]
        if unit.type in MAXIMS:
            names += [MAXIMS_GROUP, f"{unit.language}:{MAXIMS_GROUP}"]
        item = PromptItem(index, {"prompt": unit.prompt}, unit.options, unit.true_index)
        return {
            "index": index,
            "cluster": scenario,  # the scenario: its language versions share the gold letter and the story
            "group": self.group_names.index(unit.language),
            "groups": [self.group_names.index(n) for n in names],
            "view": -1,
            "label": unit.true_index,
            "item": item,
        }

    def _report(self) -> dict:
        return {
            "source": str(_csv_path(self.path)),
            "units": len(self.units),
            "rows": len({u.row_id for u in self.units}),
            "per_language": dict(Counter(u.language for u in self.units)),
            "per_type": dict(Counter(u.type for u in self.units)),
            "per_gold_letter": dict(sorted(Counter(u.answer for u in self.units).items())),
        }

    def describe(self, split: str, index: int) -> dict:
        unit = self.units[index]
        return {"id": unit.row_id, "language": unit.language, "type": unit.type, "answer": unit.answer}


def _csv_path(path) -> Path:
    """The release's file: `path` itself, or test_suite.csv in the folder it names."""
    path = Path(path)
    return path / FILE if path.is_dir() else path


def _file_name(path):
    return None if not path else str(_csv_path(path))
