"""Readers for retrieval-augmented answer generation (PragmatiCQA): Fusion-in-Decoder and two baselines.

- `FiDReader` (Izacard and Grave, 2021): each (question, passage) pair is encoded on its own; the decoder
  attends over the encoder states of all K pairs at once, so the cost of encoding grows linearly in K.
  Inputs are (B, K, L) token ids; `forward` gives the target's logits, `generate` greedy or beam search
  (transformers' generate over the fused encoder states). The generator is named by `pretrained`
  (`pragexp.pretrained.seq2seq`): `facebook/bart-large` (the paper's), `minilm` (offline), `tiny` (tests).
- `OracleReader` answers with the gold spans and answer (F1_lit = F1_prag = 1: the metric's wiring).
- `LeadReader` answers with the first sentence of the top passage as the literal span and its second
  sentence as the pragmatic one (a floor).

The baselines have no parameters and read no tokens: `predict(golds, passages)` gives each question's
(literal spans, pragmatic spans, answer). Nothing here imports pragexp.tasks or pragexp.data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import torch
from transformers.modeling_outputs import BaseModelOutput

from pragexp.models.traits import ModelTraits, PragexpModel
from pragexp.pretrained.seq2seq import load_seq2seq

Prediction = tuple[tuple[str, ...], tuple[str, ...], str]  # literal spans, pragmatic spans, answer


class FiDReader(PragexpModel):
    def __init__(
        self,
        vocab_size: int,
        special_ids: Mapping[str, int],
        pretrained: str = "facebook/bart-large",
        gradient_checkpointing: bool = False,
        tiny_config: Mapping | None = None,
    ):
        super().__init__()
        self.pretrained = pretrained
        self.generator = load_seq2seq(pretrained, vocab_size, special_ids, tiny_config)
        if gradient_checkpointing:
            # Activations of the K encoder passes dominate memory; recompute them in the backward pass.
            self.generator.gradient_checkpointing_enable()
            self.generator.config.use_cache = False

    def encode(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, K, L) -> the encoder states of all pairs side by side, (B, K*L, H), and their mask (B, K*L)."""
        batch, k, length = input_ids.shape
        states = self.generator.get_encoder()(
            input_ids=input_ids.reshape(batch * k, length),
            attention_mask=attention_mask.reshape(batch * k, length),
        ).last_hidden_state
        return states.reshape(batch, k * length, -1), attention_mask.reshape(batch, k * length)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, labels: torch.Tensor
    ) -> torch.Tensor:
        """Logits (B, T, V) of the target `labels` (B, T; -100 where padded), teacher-forced."""
        states, mask = self.encode(input_ids, attention_mask)
        # decoder inputs from the labels, not `labels=` itself: the model would also compute a loss
        # of its own that the task does not use (it needs one per example).
        out = self.generator(
            encoder_outputs=BaseModelOutput(last_hidden_state=states),
            attention_mask=mask,
            decoder_input_ids=self.generator.prepare_decoder_input_ids_from_labels(labels),
            use_cache=False,
        )
        return out.logits

    @torch.no_grad()
    def generate(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        max_new_tokens: int = 128,
        num_beams: int = 1,
    ) -> torch.Tensor:
        """Generated token ids (B, T), starting with the decoder's start token."""
        states, mask = self.encode(input_ids, attention_mask)
        return self.generator.generate(
            encoder_outputs=BaseModelOutput(last_hidden_state=states),
            attention_mask=mask,
            max_new_tokens=max_new_tokens,
            num_beams=num_beams,
            do_sample=False,
        )


class OracleReader(PragexpModel):
    """The gold literal spans, pragmatic spans and answer, as they are."""

    # Nothing to train by gradients: evaluated without a checkpoint.
    TRAITS = ModelTraits(learns_weights=False)

    def predict(
        self, golds: Sequence[Prediction], passages: Sequence[Sequence[tuple[str, str]]]
    ) -> list[Prediction]:
        return [(tuple(lit), tuple(prag), answer) for lit, prag, answer in golds]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(" ".join(text.split())) if s]


class LeadReader(PragexpModel):
    """Literal = the top passage's first sentence, pragmatic = its second, answer = the two together."""

    # Nothing to train by gradients: evaluated without a checkpoint.
    TRAITS = ModelTraits(learns_weights=False)

    def predict(
        self, golds: Sequence[Prediction], passages: Sequence[Sequence[tuple[str, str]]]
    ) -> list[Prediction]:
        out = []
        for ranked in passages:
            found = sentences(ranked[0][1]) if ranked else []
            literal, pragmatic = tuple(found[:1]), tuple(found[1:2])
            out.append((literal, pragmatic, " ".join((*literal, *pragmatic))))
        return out
