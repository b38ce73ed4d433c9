"""Hu et al. 2022's seven phenomena as an evaluation-only data module for an LLM (task=hu_pragmatics).

Every row of every selected prompt file is a test example: one item of one phenomenon in one seed's option
order. The groups are the phenomena, the views the seeds (`view_names`), the option kinds those of the files'
labels (`kind_names`: CorrectNonLiteral, IncorrectLiteral, ...). Each example's `PromptItem` holds the
authors' prompt (`prompt`, byte for byte; `prompt_body`: without its closing "Answer:", as PragReST sends it),
its scenario and question (`scenario`), the options in the seed's order and the true one; with `shots` > 0,
`shots` other items of the same phenomenon and seed, drawn for each item alone (seeded by `seed`, the
phenomenon and the item), as its demonstrations. Where the people's answers are there (`human_path`, by
default `human_data/fj` beside `prompts/`, or `human_data/no_story` for the no-story variant: its own people),
each example carries people's proportion correct on its item (`people_correct`, the paper's comparison with
people) and, from `fj`, their answer shares over its options in its own order (`reference`);
`data_report.json` gives the people's accuracy per phenomenon. The seeds' examples of one item share its id
(`cluster`): standard errors are clustered by item.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from pragexp.data.common.prompt_examples import PromptDataModule
from pragexp.data.hu_pragmatics.human import (
    HumanItem,
    PeopleCorrect,
    human_distribution_in_seed_order,
    read_human_data,
    read_no_story_answers,
)
from pragexp.data.hu_pragmatics.io import HuItem, read_prompts
from pragexp.prompting import PromptItem
from pragexp.runs.record import DataRecord
from pragexp.runs.sampling_unit import SamplingUnit

log = logging.getLogger(__name__)
# The paper's order of the phenomena; any other found is put after them.
PHENOMENA = ("CoherenceInference", "Deceits", "Humour", "IndirectSpeech", "Irony", "Maxims", "Metaphor")


class HuPragmaticsDataModule(PromptDataModule):
    dataset = "hu_pragmatics"
    sampling_unit = SamplingUnit(
        "item", "an item is scored in several option orders (seeds), which share its story and its answer"
    )
    path_split = "test"
    declared_keys = ("variant", "phenomena", "seeds", "shots")

    @classmethod
    def declared(cls, settings: Mapping) -> DataRecord:
        """The authors' folder (their files, under their names): the release's."""
        return replace(super().declared(settings), source="release")

    def __init__(
        self,
        path: str | None = None,
        human_path: str | None = None,
        phenomena: list[str] | None = None,
        variant: str = "story",
        seeds: list[int] | None = None,
        shots: int = 0,
        seed: int = 0,
        limit: int | None = None,
        report_dir: str | None = None,
        eval_batch_size: int = 16,
        num_workers: int = 0,
    ):
        super().__init__(eval_batch_size, eval_batch_size, num_workers, report_dir, limit)
        self.path, self.human_path, self.phenomena = path, human_path, phenomena
        self.variant, self.seeds = variant, seeds
        self.shots, self.seed = int(shots), int(seed)
        self.items: list[HuItem] = []
        self.item_ids: dict[tuple[str, int], int] = {}
        self.group_names: tuple[str, ...] = ()

    def setup(self, stage: str | None = None) -> None:
        if self.items:
            return
        if not self.path:
            raise ValueError(
                "data.path is not set: pass data.path=/path/to/lm-pragmatics/prompts (the prompts/ folder of "
                "github.com/jennhu/lm-pragmatics, or the repository itself)"
            )
        items, read = read_prompts(self.path, self.phenomena, self.variant, self.seeds)
        found = {i.phenomenon for i in items}
        self.group_names = tuple(p for p in PHENOMENA if p in found) + tuple(sorted(found - {*PHENOMENA}))
        self.view_names = tuple(f"seed{s}" for s in sorted({i.seed for i in items}))
        self.kind_names = tuple(sorted({k for i in items for k in i.option_kinds}))
        self.items = items
        # An item's id, shared by its seeds' option orders: its standard errors are clustered by item.
        self.item_ids = {
            key: k for k, key in enumerate(dict.fromkeys((i.phenomenon, i.item_id) for i in items))
        }
        humans, people = self._human_answers()
        self.datasets["test"] = [self._example(i, item, humans, people) for i, item in enumerate(items)]
        self.write_report(self._report(read.summary(), humans, people))
        log.info("Hu et al. %s: %d items x seeds from %d files", self.variant, len(items), len(read.files))

    def _human_answers(self) -> tuple[dict[tuple[str, int], HumanItem], dict[tuple[str, int], PeopleCorrect]]:
        """The people of this variant: per item their answers over the options (story: `fj`) and their
        proportion correct (either)."""
        folder = Path(self.human_path) if self.human_path else _beside_prompts(Path(self.path), self.variant)
        if folder is None or not folder.is_dir():
            log.warning("no human answers found (data.human_path): the human comparison is left out")
            return {}, {}
        if self.variant == "no-story":
            people, _ = read_no_story_answers(folder)
            return {}, {key: n for key, n in people.items() if key[0] in self.group_names}
        present = [p for p in self.group_names if (folder / f"Human_{p}.csv").is_file()]
        read = read_human_data(folder, present)
        humans = {(p, item_id): h for p, (found, _) in read.items() for item_id, h in found.items()}
        return humans, {key: PeopleCorrect(h.n, h.correct) for key, h in humans.items()}

    def _example(self, index: int, item: HuItem, humans: dict, people: dict) -> dict:
        human = humans.get((item.phenomenon, item.item_id))
        answered = people.get((item.phenomenon, item.item_id))
        return {
            "people_correct": answered.share if answered else float("nan"),
            "index": index,
            "group": self.group_names.index(item.phenomenon),
            "view": self.view_names.index(f"seed{item.seed}"),
            "cluster": self.item_ids[(item.phenomenon, item.item_id)],
            "label": item.true_index,
            "item": self._prompt_item(index, item),
            "kinds": [self.kind_names.index(k) for k in item.option_kinds],
            "reference": list(human_distribution_in_seed_order(human, item)) if human else None,
        }

    def _prompt_item(self, index: int, item: HuItem, with_demonstrations: bool = True) -> PromptItem:
        demonstrations = ()
        if with_demonstrations and self.shots:
            pool = [
                (j, other)
                for j, other in enumerate(self.items)
                if (other.phenomenon, other.seed) == (item.phenomenon, item.seed)
                and other.item_id != item.item_id
            ]
            if len(pool) < self.shots:
                raise ValueError(
                    f"prompt.shots={self.shots}, but {item.phenomenon} has {len(pool)} other items"
                )
            rng = random.Random(f"{self.seed}/{item.phenomenon}/{item.seed}/{item.item_id}")
            demonstrations = tuple(
                self._prompt_item(j, other, False) for j, other in rng.sample(pool, self.shots)
            )
        fields = {"prompt": item.prompt, "scenario": item.content.strip(), "phenomenon": item.phenomenon}
        fields["prompt_body"] = prompt_body(item.prompt)
        return PromptItem(index, fields, item.options, item.true_index, demonstrations=demonstrations)

    def _report(self, read: dict, humans: dict, people: dict) -> dict:
        per_phenomenon = {p: sum(i.phenomenon == p for i in self.items) for p in self.group_names}
        accuracy = {}
        for phenomenon in self.group_names:
            answers = [n for (name, _), n in people.items() if name == phenomenon]
            if answers:
                accuracy[phenomenon] = sum(n.correct for n in answers) / sum(n.answered for n in answers)
        return {
            **read,
            "variant": self.variant,
            "examples": len(self.items),
            "per_phenomenon": per_phenomenon,
            "seeds": list(self.view_names),
            "human_items": len(people),
            "human_accuracy": accuracy,
            "human_error_share": self._human_error_shares(humans),
        }

    def _human_error_shares(self, humans: dict) -> dict[str, dict[str, float]]:
        """Per phenomenon, of people's wrong answers, the share that chose an option of each kind (the model's
        `error_share/<kind>`, for people)."""
        kinds = {(i.phenomenon, i.item_id): i.original_kinds for i in self.items}
        wrong: dict[str, dict[str, int]] = {}
        for (phenomenon, item_id), human in humans.items():
            original = kinds.get((phenomenon, item_id))
            for kind, count in zip(original or (), human.counts, strict=False):
                if not kind.startswith("Correct"):
                    wrong.setdefault(phenomenon, {}).setdefault(kind, 0)
                    wrong[phenomenon][kind] += count
        return {
            p: {k: round(c / sum(counts.values()), 4) for k, c in sorted(counts.items())}
            for p, counts in wrong.items()
            if sum(counts.values())
        }

    def describe(self, split: str, index: int) -> dict:
        item = self.items[index]
        return {
            "phenomenon": item.phenomenon,
            "seed": item.seed,
            "item_id": item.item_id,
            "options": list(item.options),
            "option_kinds": list(item.option_kinds),
            "true_option": item.true_option,
        }


def _beside_prompts(path: Path, variant: str) -> Path | None:
    """The variant's people (human_data/fj, or human_data/no_story) in the repository that holds `path` (the
    prompts/ folder or the repository root)."""
    folder = Path("human_data", "no_story" if variant == "no-story" else "fj")
    for root in (path, path.parent):
        if (root / folder).is_dir():
            return root / folder
    return None


def prompt_body(prompt: str) -> str:
    """The authors' prompt without its closing "Answer:", stripped: what PragReST sends (their
    scripts/eval_common.py, `load_pragmega_data` and `make_messages`)."""
    body = prompt.strip()
    return body[: -len("Answer:")].rstrip() if body.endswith("Answer:") else body
