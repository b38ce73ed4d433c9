"""BERT classifier: a pretrained encoder, dropout and a linear head over the pooled [CLS] vector.

Inputs are the usual `input_ids`, `attention_mask`, `token_type_ids` of "[CLS] A [SEP] B [SEP]" (Circa:
question and answer). `init_ckpt` starts the encoder from another pragexp checkpoint trained with this model
(transfer, e.g. the Circa paper's BERT-MNLI-YN), ignoring that checkpoint's head: any checkpoint with a
pretrained encoder will do (Circa, NLI, BoolQ, GRICE BERT). Nothing here imports pragexp.tasks or
pragexp.data.
"""

from __future__ import annotations

import logging

import torch
from torch import nn

from pragexp.models.traits import PragexpModel
from pragexp.pretrained.encoder import load_encoder
from pragexp.runs import checkpoint

log = logging.getLogger(__name__)


class BertClassifier(PragexpModel):
    def __init__(
        self,
        num_labels: int,
        vocab_size: int | None = None,
        pretrained: str = "bert-base-uncased",
        dropout: float = 0.1,
        init_ckpt: str | None = None,
        tiny_config: dict | None = None,
    ):
        super().__init__()
        self.pretrained = pretrained
        self.encoder = load_encoder(pretrained, vocab_size=vocab_size, tiny_config=tiny_config)
        hidden = self.encoder.config.hidden_size
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(hidden, num_labels)
        std = getattr(self.encoder.config, "initializer_range", 0.02)
        nn.init.normal_(self.head.weight, std=std)
        nn.init.zeros_(self.head.bias)
        if init_ckpt:
            self.load_encoder_from(init_ckpt)

    def load_encoder_from(self, ckpt_path: str) -> None:
        saved = checkpoint.read(ckpt_path, setting="model.init_ckpt")
        weights = saved.encoder_weights()
        source = saved.encoder.get("pretrained")
        if source is not None and source != self.pretrained:
            raise ValueError(
                f"model.init_ckpt={ckpt_path} holds a {source!r} encoder, but model.pretrained="
                f"{self.pretrained}; set model.pretrained={source}"
            )
        try:
            self.encoder.load_state_dict(weights, strict=True)
        except RuntimeError as err:
            raise ValueError(
                f"model.init_ckpt={ckpt_path}: its encoder does not fit this one ({err})"
            ) from err
        log.info("encoder initialised from %s (%d tensors; its head is ignored)", ckpt_path, len(weights))

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        pooled = getattr(out, "pooler_output", None)
        if pooled is None:
            pooled = out.last_hidden_state[:, 0]
        return self.head(self.dropout(pooled))
