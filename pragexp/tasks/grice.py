"""The two GRICE tasks (Zheng et al. 2021): implicature recovery and conversational reasoning QA."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, get_args, runtime_checkable

import torch
import torch.nn.functional as F

from pragexp.batches.types import EncodedBatch, GriceBatch, PromptBatch
from pragexp.generation.ranking import chosen, target_rank
from pragexp.models.dialogue.heads import AnswerClassifier, CandidateRanker
from pragexp.models.multiple_choice import ChoiceScorer
from pragexp.tasks.base import TrainableTask, no_answer
from pragexp.tasks.contracts import TaskData
from pragexp.utils.contracts import require

GriceTaskBatch = GriceBatch | EncodedBatch | PromptBatch  # word ids, BERT's encoded text, or an LLM's prompts


class Words(Protocol):
    itos: Sequence[str]  # id -> word


class RecoveryHead(Protocol):
    """A model that is a whole recovery head (its traits say `owns_loss`: the generative Seq2SeqRanker)."""

    def loss_and_logits(
        self, batch: GriceBatch, rank: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The training loss and, when `rank`, the (B, K) candidate scores (None otherwise)."""
        ...


class VocabularyCarrier(Protocol):
    """A model holding another run's word ids (its traits say `carries_vocabulary`: MemNN w/ inf)."""

    def check_vocabulary(self, itos: Sequence[str]) -> None:
        """Raise when the data's vocabulary is not the one its weights read."""
        ...


@runtime_checkable
class GriceData(TaskData, Protocol):
    """What both GRICE tasks read (group_names: the implicature types)."""

    text_inputs: bool  # True: subword text for a pretrained-style encoder (model=bert); False: word ids
    vocab_size: int  # of the word vocabulary, or of the subword tokenizer
    vocab: Words | None  # the word vocabulary (None with text inputs): MemNN w/ inf checks its ids against it
    num_answers: int  # QA: the answer vocabulary's size
    answers: Words  # QA: the answer vocabulary, for prediction records


class _GriceTask(TrainableTask):
    data_contract = GriceData
    batch_types = get_args(GriceTaskBatch)

    def build_reader(self, datamodule: GriceData):
        """A word-id model, checked against the data's vocabulary when it carries another run's weights."""
        model = self.model_factory(vocab_size=datamodule.vocab_size)
        if self.model_traits.carries_vocabulary and datamodule.vocab is not None:
            require(model, VocabularyCarrier, f"model {type(model).__name__}")
            model.check_vocabulary(datamodule.vocab.itos)
        return model

    @property
    def data(self) -> GriceData:
        return self.trainer.datamodule

    def build_metrics(self, datamodule):
        if self.model_generates:  # an LLM's reply may name no option: counted, and wrong
            self.score_names = (*type(self).score_names, "no_answer")
        return super().build_metrics(datamodule)

    def group_name(self, group: int) -> str | None:
        names = self.data.group_names
        return names[group] if 0 <= group < len(names) else None


class GriceRecoveryTask(_GriceTask):
    """Pick the explicit form of the queried round among four candidates: R@1 and MRR.

    A model config may build a reader (wrapped in `CandidateRanker`, trained with cross-entropy
    over the candidates) or a whole head whose traits say `owns_loss` (`RecoveryHead`), such as the
    generative `Seq2SeqRanker`, which then computes its own loss and candidate scores. A text encoder
    (model=bert, with subword text from the data module) scores each candidate pair with one
    output, multiple-choice style (`ChoiceScorer`). An LLM (model=llm) scores the candidates itself; a
    generated reply that names none ranks the gold last (ties count against it)."""

    score_names = ("r@1", "mrr")

    def build_network(self, datamodule: GriceData):
        if self.model_traits.reads_prompts:
            return self.build_prompted(datamodule)
        if datamodule.text_inputs:
            return ChoiceScorer(self.model_factory(num_labels=1, vocab_size=datamodule.vocab_size))
        model = self.build_reader(datamodule)
        if not self.model_traits.owns_loss:
            return CandidateRanker(model)
        require(model, RecoveryHead, f"model {type(model).__name__}")
        return model

    def forward_batch(self, batch: GriceTaskBatch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        if self.model_traits.owns_loss:
            # Candidates are only scored for evaluation; training needs the loss alone.
            loss, logits = self.net.loss_and_logits(batch, rank=not self.training)
            if logits is None:
                return loss, {}
        elif "inputs" in batch:
            logits = self.net(**batch["inputs"])
            loss = F.cross_entropy(logits, batch["label"])
        else:
            logits = self.net(batch["history"], batch["query"], batch["candidates"])
            loss = F.cross_entropy(logits, batch["label"])
        rank = target_rank(logits, batch["label"])
        scores = {"r@1": (rank == 1).float(), "mrr": 1.0 / rank.float(), "logits": logits}
        return loss, {**scores, "no_answer": no_answer(logits)}

    def prediction_records(self, batch: GriceTaskBatch, scores: dict) -> list[dict]:
        logits = scores["logits"]
        return [
            {
                "index": int(i),
                "group": self.group_name(int(g)),
                "gold": int(y),
                "predicted": int(chosen(row.unsqueeze(0))[0]),
                "scores": [round(float(x), 4) if torch.isfinite(x) else None for x in row],
            }
            for i, g, y, row in zip(batch["index"], batch["group"], batch["label"], logits, strict=True)
        ]


class GriceQATask(_GriceTask):
    """Answer a question about the dialogue's world with one word: accuracy over the answer vocabulary.
    A text encoder (model=bert) classifies "[CLS] dialogue [SEP] question [SEP]" directly; an LLM (model=llm)
    ranks the answer words or generates one."""

    score_names = ("acc",)

    def build_network(self, datamodule: GriceData):
        if self.model_traits.reads_prompts:
            return self.build_prompted(datamodule)
        if datamodule.text_inputs:
            return self.model_factory(num_labels=datamodule.num_answers, vocab_size=datamodule.vocab_size)
        return AnswerClassifier(self.build_reader(datamodule), datamodule.num_answers)

    def forward_batch(self, batch: GriceTaskBatch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        logits = (
            self.net(**batch["inputs"]) if "inputs" in batch else self.net(batch["history"], batch["query"])
        )
        predicted = chosen(logits)
        correct = (predicted == batch["label"]).float()
        scores = {"acc": correct, "predicted": predicted, "no_answer": no_answer(logits)}
        return F.cross_entropy(logits, batch["label"]), scores

    def prediction_records(self, batch: GriceTaskBatch, scores: dict) -> list[dict]:
        answers = self.data.answers.itos
        return [
            {
                "index": int(i),
                "group": self.group_name(int(g)),
                "gold": answers[int(y)],
                "predicted": answers[int(p)] if p >= 0 else None,
            }
            for i, g, y, p in zip(
                batch["index"], batch["group"], batch["label"], scores["predicted"], strict=True
            )
        ]
