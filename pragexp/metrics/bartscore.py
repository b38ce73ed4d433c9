"""BARTScore (Yuan et al. 2021) and PragmatiCQA's symmetric answer quality Q (Qi et al. 2023).

BARTScore(x -> y) is the log-likelihood of the tokens of y given x under a sequence-to-sequence model,
averaged over y's tokens (its special tokens included, as in the original implementation). PragmatiCQA's
Q of a predicted answer â against the gold answer a is symmetric:

    Q = (BARTScore(â -> a) + BARTScore(a -> â)) / 2

with `facebook/bart-large-cnn` in the paper (a raw log-likelihood, e.g. -3.75; never scaled). Offline, any
encoder-decoder that `pragexp.pretrained.seq2seq.load_seq2seq` loads can stand in (`minilm`, `tiny`, a local
folder): the scorer's name travels with the number (`metrics.q_scorer` in the run's config and the report's
settings table), so a proxy's Q is never read as BARTScore.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from pragexp.pretrained import MINILM, TINY, resolve
from pragexp.pretrained.seq2seq import load_seq2seq
from pragexp.pretrained.tokenizer import load_tokenizer

PAPER_SCORER = "facebook/bart-large-cnn"
SCORER_SEED = 0
SETTING = "metrics.q_scorer"


class Seq2SeqScorer:
    """`score(sources, targets)` -> the token-averaged log-likelihood of each target given its source."""

    def __init__(self, name: str = PAPER_SCORER, batch_size: int = 16, max_length: int = 1024, device=None):
        self.name, self.batch_size, self.max_length = name, batch_size, max_length
        # minilm and tiny read the MiniLM (BERT) vocabulary; a hub model or folder brings its own.
        self.tokenizer = load_tokenizer(resolve(MINILM if name == TINY else name, SETTING), "the Q scorer")
        tok = self.tokenizer
        special = {
            "pad": tok.pad_token_id,
            "eos": tok.sep_token_id if tok.eos_token_id is None else tok.eos_token_id,
        }
        special["decoder_start"] = tok.cls_token_id if tok.bos_token_id is None else None
        special = {k: v for k, v in special.items() if v is not None}
        with torch.random.fork_rng(devices=[]):  # weights a checkpoint lacks (tiny, minilm's cross-attention)
            torch.manual_seed(SCORER_SEED)  # are drawn the same in every run: a metric must not vary
            self.model = load_seq2seq(
                name, vocab_size=len(tok) if name == TINY else None, special_ids=special, setting=SETTING
            )
        self.model.eval().requires_grad_(False)
        self.device = torch.device(device) if device is not None else None

    def to(self, device) -> Seq2SeqScorer:
        self.device = torch.device(device)
        self.model.to(self.device)
        return self

    @torch.inference_mode()
    def score(self, sources: Sequence[str], targets: Sequence[str]) -> list[float]:
        device = self.device or next(self.model.parameters()).device
        out: list[float] = []
        for start in range(0, len(sources), self.batch_size):
            src = self._encode(sources[start : start + self.batch_size], device)
            tgt = self._encode(targets[start : start + self.batch_size], device)
            labels = tgt["input_ids"].masked_fill(tgt["attention_mask"] == 0, -100)
            logits = self.model(  # decoder inputs, not labels=: no mean loss to throw away
                input_ids=src["input_ids"],
                attention_mask=src["attention_mask"],
                decoder_input_ids=self.model.prepare_decoder_input_ids_from_labels(labels),
            ).logits.float()
            token_ll = -torch.nn.functional.cross_entropy(
                logits.transpose(1, 2), labels, ignore_index=-100, reduction="none"
            )
            mask = (labels != -100).float()
            out += ((token_ll * mask).sum(1) / mask.sum(1).clamp(min=1)).tolist()
        return out

    def _encode(self, texts: Sequence[str], device) -> dict[str, torch.Tensor]:
        """Token ids and mask of a batch, cut to `max_length` and padded to the longest."""
        return self.tokenizer(
            list(texts), max_length=self.max_length, truncation=True, padding=True, return_tensors="pt"
        ).to(device)


def symmetric_bartscore(scorer: Seq2SeqScorer, predicted: Sequence[str], gold: Sequence[str]) -> list[float]:
    """Q per example: the mean of BARTScore in both directions between a predicted and a gold answer."""
    forward = scorer.score(predicted, gold)
    backward = scorer.score(gold, predicted)
    return [(f + b) / 2 for f, b in zip(forward, backward, strict=True)]
