"""PragmatiCQA (Qi et al., Findings of ACL 2023): retrieve passages for a question in a conversation, then
generate its literal answer spans, its pragmatic spans (what the asker will want next) and a final answer.

The network is a question encoder (the query side of the retriever; its passages' vectors sit in the
data module's FAISS index) and a reader (`model=`: `fid`, or the `oracle` and `lead` baselines). Every
step encodes the questions, searches the index and hands the top passages to the reader:

- training: the reader's target NLL over the `retriever.train_top_k` passages (the paper: top 5), plus,
  when `retriever.finetune` is on (the paper fine-tunes DPR's question encoder), an in-batch contrastive
  loss: each question against one of its gold passages, the other questions' gold passages as negatives
  (scores = inner products of the stored passage vectors, / `retriever.temperature`);
- evaluation, with `retriever.top_k` passages: `ppl` (the gold target's perplexity; its dev value picks
  the checkpoint, as in the paper), `r@<top_k>`, `r_all@<top_k>` and `hit_all@<top_k>` (and the whole
  sweep as `retrieval/<name>@<k>` for `metrics.recall_ks`; see pragexp.metrics.retrieval), and, from the
  generated output, `f1_lit`, `f1_prag` and `q` (symmetric BARTScore with `metrics.q_scorer`) overall and
  per question type, beside `f1_prag_ceiling` (the best F1_prag any output can reach: the share of
  questions whose gold pragmatic spans add something beyond the literal ones; see pragexp.metrics.spans).
  Generation is slow, so validations inside `fit` skip it (`metrics.generate_in_fit`); the best
  checkpoint's dev scores and the test scores have it.

Readers without parameters (the baselines) are not trained: fitting stops before the first epoch.
With a plateau scheduler, the learning rate is stepped after every validation (the paper halves it when
dev perplexity stops improving, validating every quarter epoch), not once per epoch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.lr_scheduler import ReduceLROnPlateau

from pragexp.metrics import GroupedMeanMetric
from pragexp.metrics.bartscore import Seq2SeqScorer, symmetric_bartscore
from pragexp.metrics.perplexity import PerplexityMetric
from pragexp.metrics.retrieval import RECALL_NAMES, recall_at_k
from pragexp.metrics.spans import f1_lit, f1_prag, f1_prag_ceiling
from pragexp.retrieval.encoders import build_encoder
from pragexp.tasks.base import EVAL_STAGES, TrainableTask

GENERATION_SCORES = ("f1_lit", "f1_prag", "f1_prag_ceiling", "q")


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
    def __init__(
        self,
        model: Callable[..., nn.Module],
        optimizer: Callable | None = None,
        scheduler: Callable | None = None,
        retriever: dict | None = None,
        generation: dict | None = None,
        q_scorer: str | None = "facebook/bart-large-cnn",
        q_batch_size: int = 16,
        recall_ks: Sequence[int] = (1, 5, 10, 20, 50),
        generate_in_fit: bool = False,
    ):
        super().__init__(model, optimizer, scheduler)
        retriever = dict(retriever or {})
        self.query_encoder_name = retriever.get("query_encoder", "minilm")
        self.pooling, self.normalize = (
            retriever.get("pooling", "mean"),
            bool(retriever.get("normalize", True)),
        )
        self.top_k, self.train_top_k = int(retriever.get("top_k", 5)), int(retriever.get("train_top_k", 5))
        self.finetune_query_encoder = bool(retriever.get("finetune", True))
        self.retrieval_loss_weight = float(retriever.get("loss_weight", 1.0))
        self.temperature = float(retriever.get("temperature", 1.0))
        self.generation = {"max_new_tokens": 128, "num_beams": 1, **(generation or {})}
        self.q_scorer_name = None if str(q_scorer).lower() in ("none", "null", "") else q_scorer
        self.q_batch_size = int(q_batch_size)
        self.recall_ks = tuple(int(k) for k in recall_ks)
        self.generate_in_fit = bool(generate_in_fit)
        self.score_names = tuple(s for s in GENERATION_SCORES if s != "q" or self.q_scorer_name)
        self.scorer: Seq2SeqScorer | None = None  # loaded at the first generating evaluation; not saved
        self._plateau: ReduceLROnPlateau | None = None
        self._plateau_monitor: str | None = None

    # -- network and metrics ------------------------------------------------------------------------------
    @property
    def dm(self):
        return self.trainer.datamodule

    def build_network(self, datamodule) -> nn.Module:
        query_encoder = build_encoder(
            self.query_encoder_name, self.pooling, self.normalize, vocab_size=datamodule.query_vocab_size
        )
        if datamodule.reader_vocab_size is None:  # the baselines read no tokens
            reader = self.model_factory()
        else:
            reader = self.model_factory(
                vocab_size=datamodule.reader_vocab_size, special_ids=datamodule.reader_special_ids
            )
        trainable = any(p.requires_grad for p in reader.parameters())
        query_encoder.requires_grad_(self.finetune_query_encoder and trainable)
        return nn.ModuleDict({"query_encoder": query_encoder, "reader": reader})

    def build_metrics(self, datamodule) -> nn.ModuleDict:
        retrieval = [f"{name}@{self.top_k}" for name in RECALL_NAMES]
        retrieval += [f"retrieval/{name}@{k}" for k in self.recall_ks for name in RECALL_NAMES]
        return nn.ModuleDict(
            {s: PragmatiCQAMetrics(self.score_names, retrieval, datamodule.group_names) for s in EVAL_STAGES}
        )

    @property
    def reader(self) -> nn.Module:
        return self.net["reader"]

    @property
    def trainable(self) -> bool:
        return any(p.requires_grad for p in self.parameters())

    # -- retrieval ------------------------------------------------------------------------------------------
    def retrieve(self, batch: dict, k: int) -> tuple[torch.Tensor, np.ndarray]:
        """The question vectors (with gradients when the encoder is fine-tuned) and the top-k passage ids."""
        vectors = self.net["query_encoder"](**batch["query"])
        groups = (
            [self.dm.search_group(e) for e in self.dm.batch_examples(batch)]
            if self.dm.scope == "community"  # read and checked by the data module
            else None
        )
        _, ids = self.dm.index.search(vectors.detach().float().cpu().numpy(), k, groups)
        return vectors, ids

    def retrieval_loss(self, vectors: torch.Tensor, gold: Sequence[Sequence[int]]) -> torch.Tensor:
        """In-batch softmax over one gold passage per question (drawn at random among its golds), the other
        questions' drawn passages being the negatives; a question's other gold passages are masked out."""
        rows = [i for i, g in enumerate(gold) if g]
        if not rows:
            return vectors.sum() * 0.0
        drawn = [gold[i][int(torch.randint(len(gold[i]), (1,)))] for i in rows]
        columns = sorted(set(drawn))
        passages = torch.from_numpy(self.dm.index.vectors(columns)).to(vectors)
        logits = vectors[rows] @ passages.T / self.temperature
        for r, i in enumerate(rows):
            for c, p in enumerate(columns):
                if p != drawn[r] and p in gold[i]:
                    logits[r, c] = float("-inf")
        target = torch.tensor([columns.index(p) for p in drawn], device=vectors.device)
        return F.cross_entropy(logits, target)

    # -- reading --------------------------------------------------------------------------------------------
    def _reader_inputs(self, batch: dict, ids: np.ndarray) -> dict[str, torch.Tensor]:
        inputs = self.dm.reader_inputs([e.query() for e in self.dm.batch_examples(batch)], ids.tolist())
        return {k: v.to(self.device) for k, v in inputs.items()}

    def target_nll(self, inputs: dict, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per example: the summed token NLL of the gold target and its number of tokens."""
        logits = self.reader(**inputs, labels=labels)
        nll = F.cross_entropy(logits.float().transpose(1, 2), labels, ignore_index=-100, reduction="none")
        return nll.sum(1), (labels != -100).sum(1)

    def predict(self, batch: dict, inputs: dict | None, ids: np.ndarray) -> list[str]:
        """Each question's output as text in the target's format (literal </lit> ... pragmatic </prag> ... answer)."""
        dm = self.dm
        if hasattr(self.reader, "predict"):  # baselines answer in spans; written out as a generator would
            golds = [(e.literal_texts, e.pragmatic_texts, e.answer) for e in self.dm.batch_examples(batch)]
            passages = [
                [(dm.index.passages[p].title, dm.index.passages[p].text) for p in row if p >= 0]
                for row in ids
            ]
            return [dm.format_answer(*spans) for spans in self.reader.predict(golds, passages)]
        generated = self.reader.generate(**inputs, **self.generation)
        return [dm.decode(row.tolist()) for row in generated]

    # -- steps ----------------------------------------------------------------------------------------------
    def training_step(self, batch: dict, batch_idx: int):
        vectors, ids = self.retrieve(batch, self.train_top_k)
        nll, tokens = self.target_nll(self._reader_inputs(batch, ids), batch["labels"])
        loss = nll.sum() / tokens.sum().clamp(min=1)
        size = len(batch["index"])
        if vectors.requires_grad:  # the question encoder is fine-tuned
            retrieval = self.retrieval_loss(vectors, batch["gold_passages"])
            self.log("train/retrieval_loss", retrieval, on_step=True, on_epoch=True, batch_size=size)
            loss = loss + self.retrieval_loss_weight * retrieval
        self.log("train/loss", loss, on_step=True, on_epoch=True, prog_bar=True, batch_size=size)
        return loss

    def _generating(self) -> bool:
        return self.generate_in_fit or self.trainer.state.fn != "fit"

    def evaluate_batch(self, stage: str, batch: dict) -> dict:
        depth = max((*self.recall_ks, self.top_k))
        _, ranked = self.retrieve(batch, depth)
        gold = batch["gold_passages"]
        scores: dict = {"retrieved": ranked[:, : self.top_k]}
        for k in sorted({*self.recall_ks, self.top_k}):
            for name, values in recall_at_k(ranked, gold, k).items():
                if k in self.recall_ks:
                    scores[f"retrieval/{name}@{k}"] = values
                if k == self.top_k:
                    scores[f"{name}@{k}"] = values
        inputs = None
        if "labels" in batch:
            inputs = self._reader_inputs(batch, ranked[:, : self.top_k])
            with torch.no_grad():
                scores["nll"], scores["tokens"] = self.target_nll(inputs, batch["labels"])
        if self._generating():
            outputs = self.predict(batch, inputs, ranked[:, : self.top_k])
            scores.update(self.generation_scores(self.dm.batch_examples(batch), outputs))
        return scores

    def generation_scores(self, examples, outputs: Sequence[str]) -> dict:
        parsed = [self.dm.parse_answer(text) for text in outputs]
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
        }
        if self.q_scorer_name:
            if self.scorer is None:
                self.scorer = Seq2SeqScorer(self.q_scorer_name, batch_size=self.q_batch_size).to(self.device)
            q = symmetric_bartscore(self.scorer, [p.answer for p in parsed], [e.answer for e in examples])
            scores["q"] = torch.tensor(q)
        return scores

    def update_metrics(self, stage: str, batch: dict, scores: dict) -> None:
        metrics, index, group = self.metrics[stage], batch["index"], batch["group"]
        retrieval = metrics.retrieval.score_names
        metrics.retrieval.update(
            index, torch.full_like(group, -1), **{k: scores[k].to(index.device) for k in retrieval}
        )
        if "nll" in scores:
            metrics.perplexity.update(index, scores["nll"], scores["tokens"])
        if "f1_lit" in scores:
            metrics.generation.update(
                index, group, **{k: scores[k].to(index.device) for k in self.score_names}
            )

    def prediction_records(self, batch: dict, scores: dict) -> list[dict]:
        passages = self.dm.index.passages
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
    def on_train_start(self) -> None:
        if not self.trainable:
            self.trainer.should_stop = True  # the baselines: nothing to learn

    def on_train_batch_start(self, batch, batch_idx) -> None:
        # A frozen question encoder retrieves without dropout in training too. Lightning keeps each module's
        # own mode (it never calls train(True) on the whole model), and restores it after validation, so the
        # mode is set here, at every batch.
        query_encoder = self.net["query_encoder"]
        if not any(p.requires_grad for p in query_encoder.parameters()):
            query_encoder.eval()

    def configure_optimizers(self):
        params = [p for p in self.parameters() if p.requires_grad]
        if not params:
            return None
        optimizer = self.optimizer_factory(params=params)
        if self.scheduler_factory is None:
            return optimizer
        config = self.scheduler_factory(
            optimizer, num_training_steps=int(self.trainer.estimated_stepping_batches)
        )
        if isinstance(config.get("scheduler"), ReduceLROnPlateau):
            # Stepped after every validation (on_validation_epoch_end); Lightning keeps its state in checkpoints.
            self._plateau, self._plateau_monitor = config["scheduler"], config.get("monitor")
            config = {**config, "strict": False}
        return {"optimizer": optimizer, "lr_scheduler": config}

    def lr_scheduler_step(self, scheduler, metric) -> None:
        if scheduler is self._plateau:
            return
        super().lr_scheduler_step(scheduler, metric)

    def on_validation_epoch_end(self) -> None:
        super().on_validation_epoch_end()
        if self._plateau is None or self.trainer.sanity_checking or self.trainer.state.fn != "fit":
            return
        value = self.eval_outputs["val"]["metrics"].get(self._plateau_monitor.split("/", 1)[1])
        if value is not None:
            self._plateau.step(float(value))
