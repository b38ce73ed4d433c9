"""ToMATO as an evaluation-only data module for an LLM (task=tomato).

Every question of the chosen file (`file`: all, first, second or fb: the release's tomato.json,
tomato_first.json, tomato_second.json, tomato_fb.json) is a test example. Its `PromptItem` holds the
transcript (`conversation`), the question and the four options in the release's order; the prompt group
renders the authors' user turn or scores the options' text (conf/prompt/tomato.yaml). Each question is in
several groups at once (the batches' "groups"): its mental state, its order (`first_order`, `second_order`),
the two together (`belief:second_order`: the report section's table of state x order), `false_belief` or
`no_false_belief`, and for each of the asked-about speaker's five traits `<trait>:<high|low>`
(`test/acc/extraversion:low`), each mean with its uncertainty, clustered by conversation (the questions on one
transcript are not independent). The options' positions are named A-D (`chosen/<letter>`). `data_report.json`
counts the questions per group.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from pragexp.data.common.prompt_examples import PromptDataModule
from pragexp.data.tomato.io import FILES, STATES, TRAITS, Question, read_questions
from pragexp.prompting import PromptItem
from pragexp.runs.sampling_unit import SamplingUnit

log = logging.getLogger(__name__)
ORDERS = ("first_order", "second_order")
BELIEF = ("false_belief", "no_false_belief")
STATE_ORDERS = tuple(f"{state}:{order}" for state in STATES for order in ORDERS)
TRAIT_LEVELS = tuple(f"{t}:{level}" for t in TRAITS for level in ("high", "low"))
GROUPS = (*STATES, *ORDERS, *BELIEF, *TRAIT_LEVELS, *STATE_ORDERS)


def question_groups(question: Question) -> list[str]:
    """The groups a question is in, its mental state first."""
    belief = BELIEF[0] if question.false_belief else BELIEF[1]
    order = ORDERS[question.order - 1]
    traits = [f"{trait}:{level}" for trait, level in question.personality]
    return [question.mental_state, order, belief, *traits, f"{question.mental_state}:{order}"]


class ToMATODataModule(PromptDataModule):
    dataset = "tomato"
    sampling_unit = SamplingUnit(
        "conversation", "the questions on one transcript ask about the same two agents and the same events"
    )
    path_split = "test"
    release_files = {"test": tuple(FILES.values())}
    declared_keys = ("file",)
    group_names = GROUPS
    position_names = ("A", "B", "C", "D")

    def __init__(
        self,
        path: str | None = None,
        file: str = "all",
        limit: int | None = None,
        report_dir: str | None = None,
        eval_batch_size: int = 16,
        num_workers: int = 0,
    ):
        super().__init__(eval_batch_size, eval_batch_size, num_workers, report_dir, limit)
        if file not in FILES:
            raise ValueError(f"data.file={file}: choose one of {', '.join(FILES)}")
        self.path, self.file = path, file
        self.questions: list[Question] = []

    @classmethod
    def declared(cls, settings: Mapping):
        path = settings.get("path")
        return super().declared(
            {**settings, "path": str(_file(path, settings.get("file", "all"))) if path else None}
        )

    def setup(self, stage: str | None = None) -> None:
        if self.questions:
            return
        if not self.path:
            raise ValueError(
                "data.path is not set: pass data.path=/path/to/ToMATO/dataset (or one of its files)"
            )
        path = _file(self.path, self.file)
        self.questions = read_questions(path)
        conversations: dict[str, int] = {}
        self.datasets["test"] = [
            self._example(i, q, conversations.setdefault(q.conversation, len(conversations)))
            for i, q in enumerate(self.questions)
        ]
        counts = Counter(g for q in self.questions for g in question_groups(q))
        self.write_report(
            {
                "source": str(path),
                "questions": len(self.questions),
                "conversations": len(conversations),
                "per_group": {g: counts[g] for g in GROUPS if counts[g]},
                "per_gold_position": dict(sorted(Counter(q.true_index for q in self.questions).items())),
            }
        )
        log.info(
            "ToMATO %s: %d questions on %d conversations", path.name, len(self.questions), len(conversations)
        )

    def _example(self, index: int, question: Question, conversation: int) -> dict:
        fields = {"conversation": question.conversation, "question": question.question}
        groups = [GROUPS.index(g) for g in question_groups(question)]
        return {
            "index": index,
            "group": groups[0],
            "groups": groups,
            "view": -1,
            "cluster": conversation,  # the questions on one transcript: one cluster
            "label": question.true_index,
            "item": PromptItem(index, fields, question.options, question.true_index),
        }

    def describe(self, split: str, index: int) -> dict:
        question = self.questions[index]
        return {"q_id": question.q_id, "mental_state": question.mental_state, "order": question.order}


def _file(path, file: str) -> Path:
    """The question file: `path` itself, or the release's file for `file` in the folder it names."""
    path = Path(path)
    return path / FILES[file] if path.is_dir() else path
