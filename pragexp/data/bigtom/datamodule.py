"""BigToM as an evaluation data module for an LLM (task=bigtom).

The story file (`path`: bigtom.csv or its folder) is read as released (`io`) and each story expanded into its
25 test items as the authors' generate_conditions.py expands it (`conditions`); every item is a test example,
condition file by condition file as theirs are (`conditions` picks some of the 25 files, `stories` the first N
stories, as their scripts' `-n`). Each item's two answers are in the order the authors' evaluate_conditions.py
gives them: their `random.seed(0)` once, then one `random.shuffle([right, wrong])` per row of a condition
file, so a story's row k gets the k-th draw of that stream in every condition (what their code does on the
file given, when nothing else draws from Python's random between rows). The `PromptItem` holds the story as
the item tells it (`story`), the question (`question`), the question with the answers as their prompt lists
them (`question_with_choices`: "<question>\\nChoose one of the following:\\na)<answer>\\nb)<answer>") and the
two answers in that order.

Groups (an item is in several): its condition file (`1_forward_belief_false_belief`), its variable
(`forward_belief`, `forward_action`, `backward_belief`, `percept_to_belief`), its condition (`true_belief`,
`false_belief`, `true_control`, `false_control`), the initial belief shown or not (`initial_belief`,
`no_initial_belief`) and the variable with it (`forward_belief:initial_belief`). A story's true-belief and
false-belief items of one variable and initial belief form a joint set (`joint_sets`): right only when both
are, the paper's TB-and-FB figure (`test/joint_acc/all`, and per variable, initial belief and both, the groups
a pair's two items share: `test/joint_acc/forward_belief:initial_belief`; `pragexp.metrics.item_sets`). The
answers' positions are named a and b (`chosen/a`). Every item carries its story (`"cluster"`): a story's items
are one draw. `data_report.json` counts the stories, the items per condition file and the right answer's
positions.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from pragexp.data.bigtom.conditions import (
    CONDITION_FILES,
    CONDITIONS,
    INITIAL_BELIEF,
    VARIABLES,
    TestItem,
    generate,
    has_file,
)
from pragexp.data.bigtom.io import FILE, read_stories
from pragexp.data.common.prompt_examples import PromptDataModule
from pragexp.prompting import PromptItem
from pragexp.runs.sampling_unit import SamplingUnit

log = logging.getLogger(__name__)
SHOWN = ("no_initial_belief", "initial_belief")  # by the authors' 0 / 1
VARIABLE_SHOWN = tuple(
    f"{v}:{SHOWN[i]}" for i in INITIAL_BELIEF for v in VARIABLES if has_file(i, v, "true_belief")
)
GROUPS = (*CONDITION_FILES, *VARIABLES, *CONDITIONS, *SHOWN, *VARIABLE_SHOWN)
JOINT = ("true_belief", "false_belief")  # the conditions whose pair is right only together
POSITIONS = ("a", "b")  # as the authors' prompt letters the answers


def authors_orders(rows: int) -> list[tuple[int, int]]:
    """Per row of a condition file, the answers' order after their `random.shuffle([right, wrong])` under
    `random.seed(0)`: (0, 1) keeps the right answer first, (1, 0) puts it second."""
    draw = random.Random(0)
    orders = []
    for _ in range(rows):
        pair = [0, 1]
        draw.shuffle(pair)
        orders.append((pair[0], pair[1]))
    return orders


def item_groups(item: TestItem) -> list[str]:
    """The groups an item is in, its condition file first."""
    shown = SHOWN[item.initial_belief]
    return [item.name, item.variable, item.condition, shown, f"{item.variable}:{shown}"]


class BigToMDataModule(PromptDataModule):
    dataset = "bigtom"
    path_split = "test"
    release_files = {"test": (FILE,)}
    declared_keys = ("conditions", "stories")
    group_names = GROUPS
    position_names = POSITIONS
    sampling_unit = SamplingUnit(
        "story", "a story's 25 items are built from its one line (its agent, setting and events): one draw"
    )

    def __init__(
        self,
        path: str | None = None,
        conditions: Sequence[str] | None = None,
        stories: int | None = None,
        limit: int | None = None,
        report_dir: str | None = None,
        eval_batch_size: int = 16,
        num_workers: int = 0,
    ):
        super().__init__(eval_batch_size, eval_batch_size, num_workers, report_dir, limit)
        unknown = [c for c in conditions or () if c not in CONDITION_FILES]
        if unknown:
            raise ValueError(
                f"data.conditions: unknown {', '.join(unknown)}; the authors' files are "
                f"{', '.join(CONDITION_FILES)}"
            )
        if stories is not None and int(stories) < 1:
            raise ValueError(f"data.stories={stories}: give a number of stories >= 1, or null for all")
        self.path, self.stories = path, None if stories is None else int(stories)
        self.conditions = tuple(conditions) if conditions else CONDITION_FILES
        self.items: list[TestItem] = []
        self.pairs: list[list[int]] = []  # the true- and false-belief pairs (joint_sets)

    @classmethod
    def declared(cls, settings: Mapping):
        path = settings.get("path")
        return super().declared({**settings, "path": str(_file(path)) if path else None})

    def setup(self, stage: str | None = None) -> None:
        if self.items:
            return
        if not self.path:
            raise ValueError(
                "data.path is not set: pass data.path=/path/to/bigtom.csv (data/bigtom/ of the release)"
            )
        path = _file(self.path)
        stories = read_stories(path)[: self.stories]
        self.items = [i for i in generate(stories) if i.name in self.conditions]
        orders = authors_orders(len(stories))
        self.pairs = _pairs(self.items)
        self.datasets["test"] = [self._example(n, i, orders[i.story]) for n, i in enumerate(self.items)]
        per_file = Counter(i.name for i in self.items)
        pair_stories = [self.items[pair[0]].story for pair in self.pairs]
        self.write_report(
            {
                "source": str(path),
                "stories": len(stories),
                "stories_with_text_after_the_fifth_sentence": sum(s.extra_text for s in stories),
                "items": len(self.items),
                "per_condition": {c: per_file[c] for c in CONDITION_FILES if per_file[c]},
                "per_right_position": dict(Counter(POSITIONS[e["label"]] for e in self.datasets["test"])),
                "joint_sets": len(pair_stories),
                # the authors' draw is a story's in every condition: both items of a pair have their right
                # answer in one position, so always answering a) scores this share of the pairs
                "joint_sets_right_first": sum(orders[s] == (0, 1) for s in pair_stories),
            }
        )
        log.info("BigToM %s: %d items from %d stories", path.name, len(self.items), len(stories))

    def _example(self, index: int, item: TestItem, order: tuple[int, int]) -> dict:
        answers = (item.correct, item.wrong)
        options = (answers[order[0]], answers[order[1]])
        listed = "\n".join(f"{p}){o}" for p, o in zip(POSITIONS, options, strict=True))
        fields = {
            "story": item.text,
            "question": item.question,
            "question_with_choices": f"{item.question}\nChoose one of the following:\n{listed}",
        }
        groups = [GROUPS.index(g) for g in item_groups(item)]
        return {
            "index": index,
            "group": groups[0],
            "groups": groups,
            "view": -1,
            "cluster": item.story,  # a story's items: one draw
            "label": order.index(0),
            "item": PromptItem(index, fields, options, order.index(0)),
        }

    def joint_sets(self, split: str) -> dict[str, list[list[int]]]:
        """The true- and false-belief pairs (`all`), and by each group both items of a pair are in (a
        variable, the initial belief shown or not, and both)."""
        if split != "test" or not self.pairs:
            return {}
        sets: dict[str, list[list[int]]] = {"all": self.pairs}
        for pair in self.pairs:
            shared = set(item_groups(self.items[pair[0]])).intersection(item_groups(self.items[pair[1]]))
            for group in sorted(shared, key=GROUPS.index):
                sets.setdefault(group, []).append(pair)
        return sets

    def describe(self, split: str, index: int) -> dict:
        item = self.items[index]
        return {"story": item.story, "condition": item.name, "right_answer": item.correct}


def _pairs(items: list[TestItem]) -> list[list[int]]:
    """The item positions of the true- and false-belief items of a story, variable and initial belief, where
    both are in the data (a set of one would be its item's accuracy under another name)."""
    members: dict[tuple, list[int]] = {}
    for n, item in enumerate(items):
        if item.condition in JOINT:
            members.setdefault((item.story, item.initial_belief, item.variable), []).append(n)
    return [rows for rows in members.values() if len(rows) == len(JOINT)]


def _file(path) -> Path:
    """The story file: `path` itself, or bigtom.csv in the folder it names."""
    path = Path(path)
    return path / FILE if path.is_dir() else path
