"""Hi-ToM as an evaluation-only data module for an LLM (task=hitom).

Every question of the release is a test example, once (its two prompting styles are the prompt group's
templates, `authors_vp` and `authors_cotp`, not two examples). Its `PromptItem` holds the story's numbered
lines (`story`), the question, the release's choices line (`choices`) and the choices' container names as
options, the gold the CoTP record's answer (`io.Question`). Each question is in several groups (the batches'
"groups"): its order (`order_0`..`order_4`), `deception` or `no_deception` (the Tell stories hold private and
public claims), its story length (`length_1`..`length_3`, chapters) and each of them by order
(`deception:order_3`, `length_2:order_4`), each mean with its uncertainty clustered by story (a story's five
questions are asked about one text).

Joint accuracy (`joint_sets`), as the authors count it (`check_response.ipynb` at commit a139da24, cell 3): a
story counts as right at order k when its questions of orders 0..k are all right; `joint_acc/order_<k>` over
every story, and by deception and length (`joint_acc/deception:order_<k>`). Their cell skips a reply it cannot
read without breaking the story's run; here such a reply is wrong (`unparsed`), so it does. The options'
positions are named A-O (`chosen/<letter>`). `data_report.json` counts the questions per group and the
questions whose two records' answers differ.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from pragexp.data.common.prompt_examples import PromptDataModule
from pragexp.data.hitom.io import FILE, LENGTHS, ORDERS, Question, read_questions
from pragexp.prompting import PromptItem
from pragexp.prompting.templates import letter
from pragexp.runs.sampling_unit import SamplingUnit

log = logging.getLogger(__name__)
ORDER_NAMES = tuple(f"order_{k}" for k in ORDERS)
DECEPTION = ("no_deception", "deception")
LENGTH_NAMES = tuple(f"length_{n}" for n in LENGTHS)
BY_ORDER = tuple(f"{part}:{order}" for part in (*DECEPTION, *LENGTH_NAMES) for order in ORDER_NAMES)
GROUPS = (*ORDER_NAMES, *DECEPTION, *LENGTH_NAMES, *BY_ORDER)


def question_groups(question: Question) -> list[str]:
    """The groups a question is in, its order first."""
    order, deception = ORDER_NAMES[question.order], DECEPTION[int(question.deception)]
    length = LENGTH_NAMES[question.length - 1]
    return [order, deception, length, f"{deception}:{order}", f"{length}:{order}"]


class HiToMDataModule(PromptDataModule):
    dataset = "hitom"
    path_split = "test"
    release_files = {"test": (FILE,)}
    group_names = GROUPS
    sampling_unit = SamplingUnit(
        "story", "a story's five questions (orders 0-4) are asked about one text; the release draws stories"
    )

    def __init__(
        self,
        path: str | None = None,
        limit: int | None = None,
        report_dir: str | None = None,
        eval_batch_size: int = 8,
        num_workers: int = 0,
    ):
        super().__init__(eval_batch_size, eval_batch_size, num_workers, report_dir, limit)
        self.path = path
        self.questions: list[Question] = []
        self.position_names = tuple(
            letter(i) for i in range(15)
        )  # the release's 15 choices; set from the data

    @classmethod
    def declared(cls, settings: Mapping):
        path = settings.get("path")
        return super().declared({**settings, "path": str(_file(path)) if path else None})

    def setup(self, stage: str | None = None) -> None:
        if self.questions:
            return
        if not self.path:
            raise ValueError(f"data.path is not set: pass data.path=/path/to/Hi-ToM_dataset (or its {FILE})")
        path = _file(self.path)
        self.questions = read_questions(path)
        widest = max(len(q.options) for q in self.questions)
        self.position_names = tuple(letter(i) for i in range(widest))
        self.datasets["test"] = [self._example(i, q) for i, q in enumerate(self.questions)]
        self.write_report(self._report(path))
        stories = len({q.story_id for q in self.questions})
        log.info("Hi-ToM %s: %d questions on %d stories", path.name, len(self.questions), stories)

    def _example(self, index: int, question: Question) -> dict:
        fields = {"story": question.story, "question": question.question, "choices": question.choices}
        groups = [GROUPS.index(g) for g in question_groups(question)]
        return {
            "index": index,
            "group": groups[0],
            "groups": groups,
            "view": -1,
            "cluster": question.story_id,  # a story's five questions: one cluster
            "label": question.true_index,
            "item": PromptItem(index, fields, question.options, question.true_index),
        }

    def joint_sets(self, split: str) -> dict[str, list[list[int]]]:
        """Per order k (overall, by deception, by length): per story, its questions of orders 0..k, where it
        has its question of order k."""
        if split != "test" or not self.questions:
            return {}
        by_story: dict[int, dict[int, int]] = {}
        for index, q in enumerate(self.questions):
            by_story.setdefault(q.story_id, {})[q.order] = index
        sets: dict[str, list[list[int]]] = {}
        for orders in by_story.values():
            first = self.questions[next(iter(orders.values()))]
            parts = ("", f"{DECEPTION[int(first.deception)]}:", f"{LENGTH_NAMES[first.length - 1]}:")
            for k in ORDERS:
                if k in orders:
                    chain = [orders[j] for j in ORDERS[: k + 1] if j in orders]
                    for part in parts:
                        sets.setdefault(f"{part}order_{k}", []).append(chain)
        return sets

    def _report(self, path: Path) -> dict:
        counts = Counter(g for q in self.questions for g in question_groups(q))
        differ = [q for q in self.questions if q.vp_answer is not None and q.vp_answer != q.answer]
        return {
            "source": str(path),
            "questions": len(self.questions),
            "stories": len({q.story_id for q in self.questions}),
            "per_group": {g: counts[g] for g in GROUPS if counts[g]},
            "per_gold_position": dict(sorted(Counter(letter(q.true_index) for q in self.questions).items())),
            "styles_disagree": {
                "questions": len(differ),
                "scored_against": "the CoTP record's answer (the authors' check_response.ipynb)",
                "sample_ids": [list(q.sample_ids) for q in differ],
            },
        }

    def describe(self, split: str, index: int) -> dict:
        q = self.questions[index]
        out = {
            "sample_ids": list(q.sample_ids),
            "order": q.order,
            "deception": q.deception,
            "length": q.length,
        }
        out["answer"] = q.answer
        if q.vp_answer is not None and q.vp_answer != q.answer:
            out["vp_answer"] = q.vp_answer
        return out


def _file(path) -> Path:
    """The release's file: `path` itself, or Hi-ToM_data.json in the folder it names."""
    path = Path(path)
    return path / FILE if path.is_dir() else path
