"""MemNN w/ inf (GRICE section 5.2, Table 6): a memory network for conversational QA with an
inference encoder appended, pre-trained on implicature recovery in the generative setting.

For every round t of the history, the inference model (a `Seq2SeqRanker`, i.e. `model=memnn_gen`
or `model=lstm_gen`, loaded from `inference_ckpt`) reads rounds < t as its history and round t
as its query, exactly as in recovery. What it infers is fused into round t's memory slot in two
ways (each can be switched off):

- `use_text`: the explicit form it decodes (greedy) is appended to the round's words
  (`question <sep> answer <sep> explicit form`) before the QA model's round encoder reads them;
- `use_state`: its dialogue state, linearly projected, is added to the round's slot vector.

The QA memory network (`MemNNReader`'s encoder, multi-hop `MemoryAttention` and fusion MLP) then
reads the slots with the question. `freeze_inference: true` keeps the inference model fixed (no
gradient, eval mode); `false` fine-tunes it through the state path (decoding is not differentiable).

The inference checkpoint's vocabulary must be the QA run's: both come from `dialogue_texts` of the
same training files, so train both on the same data (same `data.generate` settings or files). The
task calls `check_vocabulary(itos)`, which stops with a clear error otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from pragexp.models.dialogue.layers import PAD_ID
from pragexp.models.dialogue.memnn import MemNNReader
from pragexp.models.dialogue.round_reader import token_context
from pragexp.models.dialogue.seq2seq import BOUNDARY_ID
from pragexp.models.traits import ModelTraits, PragexpModel
from pragexp.runs import checkpoint

log = logging.getLogger(__name__)


def load_inference_model(ckpt_path: str | Path) -> tuple[nn.Module, list[str] | None]:
    """The generative recovery head stored in a pragexp checkpoint, and that run's vocabulary."""
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    saved = checkpoint.read(ckpt_path, setting="model.inference_ckpt")
    if not saved.model_config:
        raise ValueError(f"model.inference_ckpt={ckpt_path}: not a pragexp checkpoint (no model config)")
    itos = (saved.datamodule_state().get("vocab") or {}).get("itos")
    weights = saved.network_weights()
    if "decoder.embedding.weight" not in weights:
        raise ValueError(
            f"model.inference_ckpt={ckpt_path}: holds a {saved.model_config.get('_target_')} model, not a "
            "generative recovery model; train it with task=grice_recovery model=memnn_gen (or lstm_gen)"
        )
    vocab_size = int(weights["decoder.embedding.weight"].shape[0])
    model = instantiate(OmegaConf.create(saved.model_config))(vocab_size=vocab_size)
    model.load_state_dict(weights)
    return model, itos


def append_tokens(rounds: torch.Tensor, extra: torch.Tensor, separator: int = BOUNDARY_ID) -> torch.Tensor:
    """rounds (N, L) and extra (N, E), both left-aligned -> (N, L + 1 + E): `round <sep> extra`,
    left-aligned."""
    sep = rounds.new_full((rounds.shape[0], 1), separator)
    joined = torch.cat([rounds, sep, extra], dim=1)
    # The separator sits right after the round's last word once padding is moved to the end.
    order = joined.eq(PAD_ID).to(torch.int8).argsort(dim=1, stable=True)
    return joined.gather(1, order)


class MemNNInfReader(PragexpModel):
    """A `DialogueReader` (pragexp.models.dialogue.protocol).

    `inference_ckpt`: path of a `model=memnn_gen`/`lstm_gen` recovery checkpoint. null builds an
    untrained inference model from `inference_model` instead (tests, or the "random inference
    encoder" ablation) and says so in the log."""

    TRAITS = ModelTraits(carries_vocabulary=True)  # its inference model reads another run's word ids

    def __init__(
        self,
        vocab_size: int,
        inference_ckpt: str | None = None,
        inference_model: Callable[..., nn.Module] | None = None,
        freeze_inference: bool = True,
        use_text: bool = True,
        use_state: bool = True,
        max_explicit_len: int = 24,
        cache_size: int = 200_000,
        embed_dim: int = 64,
        hidden_dim: int = 64,
        fusion_dim: int = 128,
        hops: int = 2,
        dropout: float = 0.1,
    ):
        super().__init__()
        self.base = MemNNReader(vocab_size, embed_dim, hidden_dim, fusion_dim, hops, dropout)
        self.inference_vocab: list[str] | None = None
        if inference_ckpt:
            self.inference, self.inference_vocab = load_inference_model(inference_ckpt)
            inferred_size = self.inference.decoder.embedding.num_embeddings
            if inferred_size != vocab_size:
                raise ValueError(
                    f"model.inference_ckpt={inference_ckpt} was trained with a vocabulary of "
                    f"{inferred_size} ids, this run has {vocab_size}: train the QA run on the same "
                    "data (same data.generate settings or files) as the recovery run"
                )
        elif inference_model is not None:
            log.warning("model.inference_ckpt is null: the inference model is untrained")
            self.inference = inference_model(vocab_size=vocab_size)
        else:
            raise ValueError(
                "MemNN w/ inf needs model.inference_ckpt=<a task=grice_recovery model=memnn_gen checkpoint>"
            )
        if not (use_text or use_state):
            raise ValueError("MemNN w/ inf: use_text and use_state are both off; use model=memnn instead")
        self.inference_ckpt, self.freeze = inference_ckpt, freeze_inference
        self.use_text, self.use_state, self.max_explicit_len = use_text, use_state, max_explicit_len
        if freeze_inference:
            self.inference.requires_grad_(False)
            self.inference.eval()
        self.output_dim = self.base.output_dim
        self.state_proj = nn.Linear(self.inference.output_dim, self.output_dim) if use_state else None
        self.cache_size, self._cache = cache_size, {}
        self.register_load_state_dict_post_hook(lambda module, keys: module._cache.clear())

    def train(self, mode: bool = True):
        super().train(mode)
        if self.freeze:
            self.inference.eval()
        return self

    def encode_text(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.base.round_encoder.encode(tokens)

    def check_vocabulary(self, itos: list[str]) -> None:
        """Called by the task with the data's vocabulary: the inference model must read the same ids."""
        if self.inference_vocab is None or list(itos) == list(self.inference_vocab):
            return
        first = next(
            (i for i, (a, b) in enumerate(zip(itos, self.inference_vocab, strict=False)) if a != b),
            min(len(itos), len(self.inference_vocab)),
        )
        ours = itos[first] if first < len(itos) else "<end>"
        theirs = self.inference_vocab[first] if first < len(self.inference_vocab) else "<end>"
        raise ValueError(
            f"model.inference_ckpt={self.inference_ckpt}: its vocabulary ({len(self.inference_vocab)} "
            f"words) differs from this run's ({len(itos)} words; id {first} is {theirs!r} there, "
            f"{ours!r} here). Train the QA run on the same data (same data.generate settings or "
            "files) as the recovery run"
        )

    def infer(self, history: torch.Tensor):
        """Runs the inference model on every present round: (rows (N,) into B*R, states (N, D_inf),
        decoded explicit forms (N, E) or None). A frozen inference model's outputs depend only on
        the words up to the round, so they are cached by those words (each dialogue's rounds are
        computed once, not once per question and epoch)."""
        batch, rounds, length = history.shape
        rows = history.ne(PAD_ID).any(-1).view(-1).nonzero(as_tuple=True)[0]
        if not self.freeze or self.cache_size <= 0:
            return (rows, *self._infer_rows(history, rows))
        words = [
            [tuple(w for w in sentence if w != PAD_ID) for sentence in dialogue]
            for dialogue in history.tolist()
        ]
        keys = [tuple(words[int(r) // rounds][: int(r) % rounds + 1]) for r in rows]
        todo = [i for i, k in enumerate(keys) if k not in self._cache]
        if todo:
            states, explicit = self._infer_rows(history, rows[todo])
            if len(self._cache) + len(todo) > self.cache_size:
                self._cache.clear()
            for j, i in enumerate(todo):
                words = explicit[j][explicit[j].ne(PAD_ID)].tolist() if explicit is not None else []
                self._cache[keys[i]] = (states[j].detach(), words)
        hits = [self._cache[k] for k in keys]
        states = (
            torch.stack([h[0] for h in hits])
            if hits
            else history.new_zeros((0, self.inference.output_dim), dtype=torch.float)
        )
        explicit = None
        if self.use_text:
            longest = max((len(h[1]) for h in hits), default=0) or 1
            explicit = torch.tensor(
                [h[1] + [PAD_ID] * (longest - len(h[1])) for h in hits] or [[PAD_ID]],
                dtype=torch.long,
                device=history.device,
            )[: len(hits)]
        return rows, states, explicit

    def _infer_rows(self, history: torch.Tensor, rows: torch.Tensor):
        batch, rounds, length = history.shape
        t = rows % rounds
        prefix_mask = torch.arange(rounds, device=history.device).unsqueeze(0) < t.unsqueeze(1)  # (N, R)
        prefix = history[rows // rounds] * prefix_mask.unsqueeze(-1)
        current = history.reshape(batch * rounds, length)[rows]
        with torch.set_grad_enabled(torch.is_grad_enabled() and not self.freeze):
            encoded = self.inference.reader.read(prefix, current)
        explicit = self.inference.decode(encoded, self.max_explicit_len) if self.use_text else None
        return encoded[0], explicit

    def read(self, history: torch.Tensor, query: torch.Tensor):
        batch, rounds, length = history.shape
        present = history.ne(PAD_ID).any(-1)
        rows, states, explicit = self.infer(history)
        if explicit is not None:
            flat = history.reshape(batch * rounds, length)
            augmented = flat.new_zeros((batch * rounds, length + 1 + explicit.shape[1]))
            augmented[rows] = append_tokens(flat[rows], explicit)
            history = augmented.view(batch, rounds, -1)
        slots, slot_states = self.base.round_encoder.encode(history)
        if self.state_proj is not None:
            inferred = slots.new_zeros((batch * rounds, self.output_dim))
            inferred[rows] = self.state_proj(states)
            slots = slots + inferred.view(batch, rounds, -1)
        query_vec, query_states = self.base.round_encoder.encode(query)
        state = self.base.dialogue_state(slots, present, query_vec)
        return (state, *token_context(history, slot_states, query, query_states))

    def forward(self, history: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        return self.read(history, query)[0]
