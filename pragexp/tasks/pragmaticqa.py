"""PragmatiCQA (Qi et al., Findings of ACL 2023): retrieve passages for a question in a conversation, then
generate its literal answer spans, its pragmatic spans (what the asker will want next) and a final answer.

The network is a question encoder (the query side of the retriever; its passages' vectors sit in the
data module's FAISS index) and a reader (`model=`: `fid`, `llm`, or the `oracle` and `lead` baselines), which
the task reads through one contract, `Reader` (pragexp.tasks.pragmaticqa_readers: an adapter per kind of
model, chosen when the network is built). Every step encodes the questions, searches the index and hands the
top passages to the reader:

- training: the reader's target NLL over the `retriever.train_top_k` passages (the paper: top 5), plus,
  when `retriever.finetune` is on (the paper fine-tunes DPR's question encoder), an in-batch contrastive
  loss: each question against one of its gold passages, the other questions' gold passages as negatives
  (scores = inner products of the stored passage vectors, / `retriever.temperature`);
- evaluation, with `retriever.top_k` passages: `ppl` (the gold target's perplexity; its dev value picks
  the checkpoint, as in the paper), `r@<top_k>`, `r_all@<top_k>` and `hit_all@<top_k>` (and the whole
  sweep as `retrieval/<name>@<k>` for `metrics.recall_ks`; see pragexp.metrics.retrieval), and, from the
  generated output, `f1_lit`, `f1_prag` and `q` (symmetric BARTScore with `metrics.q_scorer`) overall and
  per question type, beside `f1_prag_ceiling` (the best F1_prag any output can reach: the share of
  questions whose gold pragmatic spans add something beyond the literal ones; see pragexp.metrics.spans)
  and `well_formed` (the share of outputs in the target's format: literal spans, tags, a final answer).
  An LLM reader (`model=llm`) writes the target from a prompt holding the conversation and the top-k
  passages, its demonstrations (`prompt.shots`) showing training questions with their gold passages.
  Generation is slow, so validations inside `fit` skip it (`metrics.generate_in_fit`); the best
  checkpoint's dev scores and the test scores have it.

The retriever's settings are the data module's `retriever` (a `RetrieverSpec`, read once from the config).
Readers without parameters (the baselines) are not trained, and a plateau scheduler is stepped after every
validation, as `TrainableTask` does for every task. What the task reads from its data module is
`PragmatiCQAData`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from pragexp.batches.types import PragmatiCQABatch
from pragexp.metrics import GroupedMeanMetric
from pragexp.metrics.bartscore import Seq2SeqScorer, symmetric_bartscore
from pragexp.metrics.perplexity import PerplexityMetric
from pragexp.metrics.retrieval import RECALL_NAMES, recall_at_k
from pragexp.metrics.spans import f1_lit, f1_prag, f1_prag_ceiling
from pragexp.prompting.reader_text import ReaderText
from pragexp.retrieval.encoders import build_encoder
from pragexp.retrieval.spec import RetrieverSpec
from pragexp.retrieval.store import PassageIndex
from pragexp.tasks.base import EVAL_STAGES, TrainableTask
from pragexp.tasks.contracts import TaskData
from pragexp.tasks.pragmaticqa_readers import (
    PromptedReader,
    PromptedWriter,
    Question,
    Reader,
    Reading,
    SpanBaseline,
    SpanReader,
    TextModel,
    TokenReader,
)
from pragexp.utils.contracts import require

GENERATION_SCORES = ("f1_lit", "f1_prag", "f1_prag_ceiling", "well_formed", "q")


class ParsedOutput(Protocol):
    """An output read back into its parts (pragexp.data.pragmaticqa.answer_format.ParsedAnswer)."""

    literal: tuple[str, ...]
    pragmatic: tuple[str, ...]
    answer: str


@runtime_checkable
class PragmatiCQAData(TaskData, Protocol):
    """What the task reads (group_names: the question types)."""

    retriever: RetrieverSpec  # read once from the config; the question side and the search settings
    index: PassageIndex  # the passages, their stored vectors and the search over them
    query_vocab_size: int  # of the question encoder's tokenizer
    reader_text: ReaderText | None  # the reader's tokenizer and text handling; None for the baselines

    def batch_examples(self, batch: PragmatiCQABatch) -> Sequence[Question]:
        """The examples of a batch (`batch["split"]`, `batch["index"]`)."""
        ...

    def search_group(self, example: Question) -> str:
        """The passage group an example's search is kept to (`retriever.scope=community`)."""
        ...

    def format_answer(self, literal: Sequence[str], pragmatic: Sequence[str], answer: str) -> str:
        """Spans and answer as one output text: what a baseline's prediction is written as."""
        ...

    def parse_answer(self, text: str) -> ParsedOutput: ...

    def well_formed(self, text: str) -> bool:
        """Whether an output follows the target's format (literal spans, tags, a final answer)."""
        ...

    def prompt_item(self, example: Question, passages: Sequence[tuple[str, str]], index: int):
        """A question and its retrieved (title, text) passages as an LLM reads them (model=llm)."""
        ...


class PragmatiCQAMetrics(nn.Module):
    """One evaluation stage's metrics: generation scores per question type, retrieval recall and perplexity,
    each exact under DDP. `compute()` merges them into one dict of `name` -> value."""

    def __init__(self, generation: Sequence[str], retrieval: Sequence[str], groups: Sequence[str]):
        super().__init__()
        self.generation = GroupedMeanMetric(generation, groups)
        self.retrieval = GroupedMeanMetric(retrieval)
        self.perplexity = PerplexityMetric()

    def compute(self) -> dict[str, torch.Tensor]:
        out = {}
        for metric in (self.perplexity, self.generation, self.retrieval):
            if metric.update_called:
                out.update(metric.compute())
        return out

    def reset(self) -> None:
        for metric in (self.generation, self.retrieval, self.perplexity):
            metric.reset()


class PragmatiCQATask(TrainableTask):
    data_contract = PragmatiCQAData
    batch_types = (PragmatiCQABatch,)

    def __init__(
        self,
        model: Callable[..., nn.Module],
        optimizer: Callable | None = None,
        scheduler: Callable | None = None,
        generation: dict | None = None,
        q_scorer: str | None = "facebook/bart-large-cnn",
        q_batch_size: int = 16,
        recall_ks: Sequence[int] = (1, 5, 10, 20, 50),
        generate_in_fit: bool = False,
    ):
        super().__init__(model, optimizer, scheduler)
        self.generation = {"max_new_tokens": 128, "num_beams": 1, **(generation or {})}
        self.q_scorer_name = None if str(q_scorer).lower() in ("none", "null", "") else q_scorer
        self.q_batch_size = int(q_batch_size)
        self.recall_ks = tuple(int(k) for k in recall_ks)
        self.generate_in_fit = bool(generate_in_fit)
        self.score_names = tuple(s for s in GENERATION_SCORES if s != "q" or self.q_scorer_name)
        self.retriever: RetrieverSpec | None = None  # the data module's, taken in build_network
        self.scorer: Seq2SeqScorer | None = None  # loaded at the first generating evaluation; not saved
        self.reader: Reader | None = None  # the reader's adapter, chosen in build_network

    # -- network and metrics ------------------------------------------------------------------------------
    @property
    def data(self) -> PragmatiCQAData:
        return self.trainer.datamodule

    def build_network(self, datamodule: PragmatiCQAData) -> nn.Module:
        self.retriever = datamodule.retriever
        spec = self.retriever.encoder("query")
        query_encoder = build_encoder(
            spec.name, spec.pooling, spec.normalize, vocab_size=datamodule.query_vocab_size
        )
        model, self.reader = self.build_reader(datamodule)
        trainable = any(p.requires_grad for p in model.parameters())
        query_encoder.requires_grad_(self.retriever.finetune and trainable)
        return nn.ModuleDict({"query_encoder": query_encoder, "reader": model})

    def build_reader(self, datamodule: PragmatiCQAData) -> tuple[nn.Module, Reader]:
        """The reader's model and the adapter the task reads it through, chosen by what the model is."""
        text = datamodule.reader_text
        if self.model_traits.reads_prompts:  # an LLM writes the target from a prompt (model=llm)
            model = self.build_prompted(datamodule, PromptedWriter)
            return model, PromptedReader(model, datamodule.prompt_item, datamodule.format_answer)
        if text is None:  # the baselines read no tokens
            model = self.model_factory()
            require(model, SpanBaseline, f"model {type(model).__name__} as a PragmatiCQA reader")
            return model, SpanReader(model, datamodule.format_answer)
        model = self.model_factory(vocab_size=text.vocab_size, special_ids=text.special_ids)
        require(model, TextModel, f"model {type(model).__name__} as a PragmatiCQA reader")
        return model, TokenReader(model, text, self.generation)

    def build_metrics(self, datamodule: PragmatiCQAData) -> nn.ModuleDict:
        top_k = self.retriever.top_k
        retrieval = [f"{name}@{top_k}" for name in RECALL_NAMES]
        retrieval += [f"retrieval/{name}@{k}" for k in self.recall_ks for name in RECALL_NAMES]
        return nn.ModuleDict(
            {s: PragmatiCQAMetrics(self.score_names, retrieval, datamodule.group_names) for s in EVAL_STAGES}
        )

    # -- retrieval ------------------------------------------------------------------------------------------
    def retrieve(self, batch: PragmatiCQABatch, k: int) -> tuple[torch.Tensor, np.ndarray]:
        """The question vectors (with gradients when the encoder is fine-tuned) and the top-k passage ids."""
        vectors = self.net["query_encoder"](**batch["query"])
        groups = None
        if self.retriever.scope == "community":
            groups = [self.data.search_group(e) for e in self.data.batch_examples(batch)]
        _, ids = self.data.index.search(vectors.detach().float().cpu().numpy(), k, groups)
        return vectors, ids

    def retrieval_loss(self, vectors: torch.Tensor, gold: Sequence[Sequence[int]]) -> torch.Tensor:
        """In-batch softmax over one gold passage per question (drawn at random among its golds), the other
        questions' drawn passages being the negatives; a question's other gold passages are masked out."""
        rows = [i for i, g in enumerate(gold) if g]
        if not rows:
            return vectors.sum() * 0.0
        drawn = [gold[i][int(torch.randint(len(gold[i]), (1,)))] for i in rows]
        columns = sorted(set(drawn))
        passages = torch.from_numpy(self.data.index.vectors(columns)).to(vectors)
        logits = vectors[rows] @ passages.T / self.retriever.temperature
        for r, i in enumerate(rows):
            for c, p in enumerate(columns):
                if p != drawn[r] and p in gold[i]:
                    logits[r, c] = float("-inf")
        target = torch.tensor([columns.index(p) for p in drawn], device=vectors.device)
        return F.cross_entropy(logits, target)

    def passage_texts(self, ids: np.ndarray) -> list[list[tuple[str, str] | None]]:
        """(title, text) of each retrieved passage; None where fewer than k passages were found."""
        passages = self.data.index.passages
        return [[(passages[p].title, passages[p].text) if p >= 0 else None for p in row] for row in ids]

    def reading(self, batch: PragmatiCQABatch, ids: np.ndarray) -> Reading:
        """The batch's questions with their retrieved passages `ids`, as a reader reads them."""
        examples = self.data.batch_examples(batch)
        return Reading(examples, batch["index"].tolist(), self.passage_texts(ids), batch.get("labels"))

    # -- steps ----------------------------------------------------------------------------------------------
    def forward_batch(self, batch: PragmatiCQABatch) -> tuple[torch.Tensor, dict]:
        """The training loss: the reader's target NLL per token over the `retriever.train_top_k` passages,
        plus the weighted retrieval loss when the question encoder is fine-tuned. A fine-tuned LLM reader
        learns the same target text after its prompt (`PromptedReader.target_nll`). (Evaluation retrieves
        deeper and generates: `evaluate_batch`.)"""
        vectors, ids = self.retrieve(batch, self.retriever.train_top_k)
        nll, tokens = self.reader.target_nll(self.reading(batch, ids))
        loss = nll.sum() / tokens.sum().clamp(min=1)
        if vectors.requires_grad:  # the question encoder is fine-tuned
            retrieval = self.retrieval_loss(vectors, batch["gold_passages"])
            self.log(
                "train/retrieval_loss", retrieval, on_step=True, on_epoch=True, batch_size=len(batch["index"])
            )
            loss = loss + self.retriever.loss_weight * retrieval
        return loss, {}

    def _generating(self) -> bool:
        return self.generate_in_fit or self.trainer.state.fn != "fit"

    def evaluate_batch(self, stage: str, batch: PragmatiCQABatch) -> dict:
        top_k = self.retriever.top_k
        _, ranked = self.retrieve(batch, max((*self.recall_ks, top_k)))
        gold = batch["gold_passages"]
        scores: dict = {"retrieved": ranked[:, :top_k]}
        for k in sorted({*self.recall_ks, top_k}):
            for name, values in recall_at_k(ranked, gold, k).items():
                if k in self.recall_ks:
                    scores[f"retrieval/{name}@{k}"] = values
                if k == top_k:
                    scores[f"{name}@{k}"] = values
        reading = self.reading(batch, ranked[:, :top_k])
        with torch.no_grad():
            target = self.reader.target_nll(reading)
        if target is not None:
            scores["nll"], scores["tokens"] = target
        if self._generating():
            scores.update(self.generation_scores(reading.examples, self.reader.write(reading)))
        return scores

    def generation_scores(self, examples: Sequence[Question], outputs: Sequence[str]) -> dict:
        parsed = [self.data.parse_answer(text) for text in outputs]
        scores = {
            "output": list(outputs),
            "parsed": parsed,
            "f1_lit": torch.tensor(
                [f1_lit(p.literal, e.literal_texts) for p, e in zip(parsed, examples, strict=True)]
            ),
            "f1_prag": torch.tensor(
                [
                    f1_prag(p.pragmatic, e.pragmatic_texts, e.literal_texts)
                    for p, e in zip(parsed, examples, strict=True)
                ]
            ),
            "f1_prag_ceiling": torch.tensor(
                [f1_prag_ceiling(e.pragmatic_texts, e.literal_texts) for e in examples]
            ),
            "well_formed": torch.tensor([float(self.data.well_formed(text)) for text in outputs]),
        }
        if self.q_scorer_name:
            if self.scorer is None:
                self.scorer = Seq2SeqScorer(self.q_scorer_name, batch_size=self.q_batch_size).to(self.device)
            q = symmetric_bartscore(self.scorer, [p.answer for p in parsed], [e.answer for e in examples])
            scores["q"] = torch.tensor(q)
        return scores

    def update_metrics(self, stage: str, batch: PragmatiCQABatch, scores: dict) -> None:
        metrics, index = self.metrics[stage], batch["index"]
        retrieval = metrics.retrieval.score_names
        metrics.retrieval.update(batch, **{k: scores[k].to(index.device) for k in retrieval})  # no groups
        if "nll" in scores:
            metrics.perplexity.update(batch, scores["nll"], scores["tokens"])
        if "f1_lit" in scores:
            metrics.generation.update(batch, **{k: scores[k].to(index.device) for k in self.score_names})

    def prediction_records(self, batch: PragmatiCQABatch, scores: dict) -> list[dict]:
        passages = self.data.index.passages
        records = []
        for i, (index, row) in enumerate(zip(batch["index"].tolist(), scores["retrieved"], strict=True)):
            record = {
                "index": index,
                "retrieved": [int(p) for p in row],
                "retrieved_titles": [passages[p].title for p in row if p >= 0],
            }
            if "parsed" in scores:
                parsed = scores["parsed"][i]
                record.update(
                    {
                        "predicted_literal": list(parsed.literal),
                        "predicted_pragmatic": list(parsed.pragmatic),
                        "predicted_answer": parsed.answer,
                        "output": scores["output"][i],
                        **{name: round(float(scores[name][i]), 4) for name in self.score_names},
                    }
                )
            records.append(record)
        return records

    # -- fitting --------------------------------------------------------------------------------------------
    def on_train_batch_start(self, batch, batch_idx) -> None:
        # A frozen question encoder retrieves without dropout in training too. Lightning keeps each module's
        # own mode (it never calls train(True) on the whole model), and restores it after validation, so the
        # mode is set here, at every batch.
        query_encoder = self.net["query_encoder"]
        if not any(p.requires_grad for p in query_encoder.parameters()):
            query_encoder.eval()
