"""OpenToM as an evaluation-only data module for an LLM (task=opentom).

The stories evaluated are drawn as the authors' `src/run_baseline.py` draws them (`main`, `sample_entries`,
`sample_questions`): the metadata's story keys shuffled by Python's `random` seeded with `seed` (their 42),
cut into batches of `batch_stories` (50), the first `batches` (5) kept: 250 of the 596 stories; and, per story
and per multi-hop file (first order, then second), two of its four fullness questions dropped, drawn by
numpy's legacy generator seeded with the same seed, as theirs (so each story keeps 2 fullness and 2
accessibility questions per order). `batches: null` evaluates every story as one batch; `drop_fullness: false`
keeps every question. The authors run the coarse or the fine location questions (`location`: coarse, fine or
both, the default: the same draws either way, as their fine runs reuse their coarse runs' stories).

Each question's `PromptItem` holds the narrative, the question as released (`question`) and as the authors'
prompt poses it (`question_prompt`: their `build_prompt` adds the genre's answer instruction, and rewrites an
attitude question), and its genre's options (io.py). Groups: genre and order (`location_coarse:first_order`,
..., `multihop:second_order`, `fullness:...`, `accessibility:...`, `attitude`), each genre, each order. The
macro-F1 of the authors' genres (`f1_sets`: the location genres by order, multi-hop by order with fullness and
accessibility pooled as their `evaluate.py` pools them, each apart, attitude) over every story evaluated and
per batch, their mean and spread (`pragexp.metrics.item_sets`). Accuracy's uncertainty is clustered by story
(a story's questions are asked about one narrative).
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from pragexp.data.common.prompt_examples import PromptDataModule
from pragexp.data.opentom.io import (
    META,
    META_LONG,
    QUESTION_FILES,
    Question,
    Story,
    question_file,
    read_questions,
    read_stories,
)
from pragexp.data.opentom.questions import GENRES, ORDERS, f1_names, question_groups, question_prompt
from pragexp.prompting import PromptItem
from pragexp.runs.sampling_unit import SamplingUnit
from pragexp.utils.errors import DataFormatError

log = logging.getLogger(__name__)
LOCATIONS = {
    "coarse": ("location_coarse",),
    "fine": ("location_fine",),
    "both": ("location_coarse", "location_fine"),
}
NARRATIVES = {"short": (META, "narrative"), "long": (META_LONG, "long_narrative")}


class OpenToMDataModule(PromptDataModule):
    dataset = "opentom"
    path_split = "test"
    release_files = {"test": (META, *(name for name, _, _, _ in QUESTION_FILES))}
    declared_keys = ("location", "narrative", "batches", "batch_stories", "seed", "drop_fullness")
    group_names = (*GENRES, *ORDERS, *(f"{g}:{o}" for g in GENRES[:-1] for o in ORDERS))
    sampling_unit = SamplingUnit(
        "story", "a story's questions are asked about one narrative; the release draws stories"
    )

    def __init__(
        self,
        path: str | None = None,
        location: str = "both",
        narrative: str = "short",
        batches: int | None = 5,
        batch_stories: int = 50,
        seed: int = 42,
        drop_fullness: bool = True,
        limit: int | None = None,
        report_dir: str | None = None,
        eval_batch_size: int = 16,
        num_workers: int = 0,
    ):
        super().__init__(eval_batch_size, eval_batch_size, num_workers, report_dir, limit)
        if location not in LOCATIONS or narrative not in NARRATIVES:
            raise ValueError(
                f"data.location={location}, data.narrative={narrative}: choose {set(LOCATIONS)}, short|long"
            )
        self.path, self.location, self.narrative = path, location, narrative
        self.batches, self.batch_stories, self.seed, self.drop_fullness = (
            batches,
            batch_stories,
            seed,
            drop_fullness,
        )
        self.questions: list[Question] = []
        self.batch_of: list[int] = []  # per question, its batch
        self.stories: dict[str, Story] = {}

    def setup(self, stage: str | None = None) -> None:
        if self.questions:
            return
        if not self.path:
            raise ValueError("data.path is not set: pass data.path=/path/to/OpenToM/data/opentom_data")
        folder = Path(self.path)
        meta, field = NARRATIVES[self.narrative]
        every = read_stories(folder / META)  # every question's story must be here, whatever is evaluated
        self.stories = every if meta == META else read_stories(folder / meta, field)
        per_story, skipped = self._read(folder, every)
        drawn = self.draw_batches(list(self.stories))
        dropper = np.random.RandomState(self.seed)
        for b, keys in enumerate(drawn):
            for key in keys:
                for questions in per_story.get(key, []):
                    kept = self._without_fullness(questions, dropper) if self.drop_fullness else questions
                    self.questions += kept
                    self.batch_of += [b] * len(kept)
        self.datasets["test"] = [self._example(i, q) for i, q in enumerate(self.questions)]
        self.write_report(self._report(folder, drawn, skipped))
        log.info(
            "OpenToM: %d questions on %d stories in %d batches",
            len(self.questions),
            sum(map(len, drawn)),
            len(drawn),
        )

    def _read(self, folder: Path, every: Mapping[str, Story]) -> tuple[dict[str, list[list[Question]]], int]:
        """Per story, its questions file by file (in the authors' order of files), and the fine location
        answers skipped (neither place)."""
        per_story: dict[str, list[list[Question]]] = {}
        skipped = 0
        for name, old, genre, order in QUESTION_FILES:
            if genre.startswith("location") and genre not in LOCATIONS[self.location]:
                continue
            questions, dropped = read_questions(question_file(folder, name, old), genre, order, every)
            skipped += dropped
            by_story: dict[str, list[Question]] = {}
            for q in questions:
                by_story.setdefault(q.story, []).append(q)
            for key, found in by_story.items():
                per_story.setdefault(key, []).append(found)
        return per_story, skipped

    def draw_batches(self, keys: list[str]) -> list[list[str]]:
        """The authors' batches of story keys (their `sample_entries`): shuffled with Python's random seeded
        with `seed`, cut into `batch_stories` each, the first `batches` kept; None: every story, one batch."""
        if self.batches is None:
            return [keys]
        needed = self.batches * self.batch_stories
        if needed > len(keys):
            raise ValueError(
                f"data.batches={self.batches} x data.batch_stories={self.batch_stories} = {needed} stories, "
                "and "
                f"{self.narrative} narratives number {len(keys)}: lower data.batch_stories (at most "
                f"{len(keys) // self.batches}) or set data.batches=null (every story, one batch)"
            )
        shuffled = list(keys)
        random.Random(self.seed).shuffle(shuffled)
        return [shuffled[b * self.batch_stories : (b + 1) * self.batch_stories] for b in range(self.batches)]

    @staticmethod
    def _without_fullness(questions: list[Question], dropper: np.random.RandomState) -> list[Question]:
        """A multi-hop file's questions of a story less two of its fullness ones, drawn as
        `sample_questions`."""
        if not questions or questions[0].genre not in ("fullness", "accessibility"):
            return questions
        fullness = [i for i, q in enumerate(questions) if "fullness" in q.question]
        if len(fullness) < 2:
            where = f"story {questions[0].story!r}"
            raise DataFormatError(
                questions[0].file,
                "has under two fullness questions to drop (data.drop_fullness)",
                where=where,
            )
        dropped = set(dropper.choice(fullness, 2, replace=False).tolist())
        return [q for i, q in enumerate(questions) if i not in dropped]

    def _example(self, index: int, question: Question) -> dict:
        story = self.stories[question.story]
        fields = {
            "narrative": story.narrative,
            "question": question.question,
            "question_prompt": question_prompt(question.question, question.genre),
        }
        groups = [self.group_names.index(g) for g in question_groups(question)]
        return {
            "index": index,
            "group": groups[0],
            "groups": groups,
            "view": -1,
            "cluster": story.number,  # a story's questions: one cluster
            "label": question.true_index,
            "item": PromptItem(index, fields, question.options, question.true_index),
        }

    def f1_sets(self, split: str) -> dict[str, list[list[int]]]:
        """The authors' genres' questions, per batch (name -> batches of indices)."""
        if split != "test" or not self.questions:
            return {}
        count = max(self.batch_of) + 1
        sets: dict[str, list[list[int]]] = {}
        for index, (q, b) in enumerate(zip(self.questions, self.batch_of, strict=True)):
            for name in f1_names(q):
                sets.setdefault(name, [[] for _ in range(count)])[b].append(index)
        return sets

    def _report(self, folder: Path, drawn: list[list[str]], skipped: int) -> dict:
        counts = Counter(g for q in self.questions for g in question_groups(q))
        labels = Counter(f"{q.genre}:{q.answer}" for q in self.questions)
        return {
            "source": str(folder),
            "narratives": self.narrative,
            "stories_in_release": len(self.stories),
            "batches": [len(keys) for keys in drawn],
            "stories": sum(len(keys) for keys in drawn),
            "questions": len(self.questions),
            "skipped_fine_answers_neither_place": skipped,
            "per_group": {g: counts[g] for g in self.group_names if counts[g]},
            "per_answer": dict(sorted(labels.items())),
            "f1_gold_positions": self._gold_positions(),
        }

    def _gold_positions(self) -> dict[str, list[int]]:
        """Per F1 genre, its questions' gold options counted by position (the classes: a chance row's F1)."""
        counts: dict[str, list[int]] = {}
        for q in self.questions:
            for name in f1_names(q):
                found = counts.setdefault(name, [0] * len(q.options))
                found[q.true_index] += 1
        return counts

    def describe(self, split: str, index: int) -> dict:
        q = self.questions[index]
        return {
            "story": q.story,
            "file": q.file,
            "position": q.position,
            "genre": q.genre,
            "batch": self.batch_of[index],
        }
