"""Generative setting of GRICE implicature recovery ("-Gen" rows of Table 5).

A dialogue reader (any `DialogueReader`, see protocol.py) encodes the
history and the queried round; an attentional LSTM decoder is trained with teacher forcing to
generate the round's explicit form. At evaluation the four candidates are ranked by their
log-likelihood under the decoder, **length-normalised**: the mean log-probability per predicted
token, the end-of-sentence token included (`length_normalise: false` gives the plain sum). The
decoder can also write free text (greedy or beam search) for inspection: `Seq2SeqRanker.generate`.

Sentence boundaries belong to the model, not the data: every target and candidate is wrapped as
`<bos> words <eos>`, both being `boundary_id` (the vocabulary's `<sep>`, id 2), as GPT-2 uses one
token for both. The data gives the explicit form's words in `batch["target"]`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from pragexp.models.dialogue.layers import PAD_ID, mlp
from pragexp.models.traits import ModelTraits, PragexpModel

BOUNDARY_ID = 2  # `<sep>`, the third special token of pragexp.data.common.tokens.vocab (a test checks)


def with_boundaries(tokens: torch.Tensor, boundary_id: int = BOUNDARY_ID) -> torch.Tensor:
    """(..., L) left-aligned, padded token ids -> (..., L + 2): `<bos> tokens <eos> pad...`."""
    lengths = tokens.ne(PAD_ID).sum(-1, keepdim=True)
    out = F.pad(tokens, (1, 1), value=PAD_ID)
    out[..., 0] = boundary_id
    return out.scatter(-1, lengths + 1, boundary_id)


def sequence_log_likelihood(
    log_probs: torch.Tensor, targets: torch.Tensor, normalise: bool = True
) -> torch.Tensor:
    """log_probs (N, T, V) of predicting targets (N, T) (PAD = not predicted) -> (N,) summed or
    mean-per-token log-likelihood."""
    mask = targets.ne(PAD_ID)
    picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1).masked_fill(~mask, 0.0)
    total = picked.sum(-1)
    return total / mask.sum(-1).clamp(min=1) if normalise else total


class AttentionDecoder(nn.Module):
    """LSTM decoder conditioned on the reader's state (initial hidden state and an input at every
    step) with dot-product attention over the reader's token states after each step (Luong et al.
    2015), so a whole teacher-forced sequence runs in one LSTM call."""

    def __init__(
        self,
        vocab_size: int,
        context_dim: int,
        embed_dim: int = 64,
        hidden_dim: int = 128,
        dropout: float = 0.1,
    ):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
        self.init = nn.Linear(context_dim, 2 * hidden_dim)
        self.lstm = nn.LSTM(embed_dim + context_dim, hidden_dim, batch_first=True)
        self.attend = nn.Linear(hidden_dim, context_dim)
        self.dropout = nn.Dropout(dropout)
        self.out = mlp(hidden_dim + context_dim, hidden_dim, vocab_size, dropout)

    def start(self, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h, c = torch.tanh(self.init(state)).chunk(2, dim=-1)
        return h.unsqueeze(0).contiguous(), c.unsqueeze(0).contiguous()

    def forward(
        self,
        inputs: torch.Tensor,
        hidden,
        state: torch.Tensor,
        context: torch.Tensor,
        context_mask: torch.Tensor,
    ):
        """inputs (N, T) -> (log-probabilities of the next token (N, T, V), new hidden state)."""
        embedded = self.dropout(self.embedding(inputs))
        x = torch.cat([embedded, state.unsqueeze(1).expand(-1, inputs.shape[1], -1)], dim=-1)
        outputs, hidden = self.lstm(x, hidden)
        scores = torch.einsum("ntd,nsd->nts", self.attend(outputs), context)
        scores = scores.masked_fill(~context_mask.unsqueeze(1), torch.finfo(scores.dtype).min)
        attended = torch.einsum("nts,nsd->ntd", scores.softmax(-1), context)
        return self.out(torch.cat([outputs, attended], dim=-1)).log_softmax(-1), hidden


class Seq2SeqRanker(PragexpModel):
    """A GRICE recovery head: `reader` encodes, `AttentionDecoder` generates the explicit form.

    - `loss_and_logits(batch, rank)`: teacher-forced token-mean NLL of `batch["target"]` (the explicit
      form) and, when `rank`, the (B, K) candidate scores (their length-normalised log-likelihood);
    - `forward(history, query, candidates) -> (B, K)` candidate scores, like `CandidateRanker`;
    - `generate(history, query, max_len, beam_size)` -> (B, <=max_len) decoded token ids.

    `reader` is a module or a factory taking `vocab_size` (the config's nested `_partial_`).
    """

    TRAITS = ModelTraits(owns_loss=True)  # it scores the candidates and computes its own loss

    def __init__(
        self,
        reader: nn.Module | Callable[..., nn.Module],
        vocab_size: int,
        embed_dim: int = 64,
        decoder_dim: int = 128,
        dropout: float = 0.1,
        length_normalise: bool = True,
        boundary_id: int = BOUNDARY_ID,
    ):
        super().__init__()
        self.reader = reader if isinstance(reader, nn.Module) else reader(vocab_size=vocab_size)
        self.decoder = AttentionDecoder(vocab_size, self.reader.output_dim, embed_dim, decoder_dim, dropout)
        self.length_normalise, self.boundary_id = length_normalise, boundary_id
        self.output_dim = self.reader.output_dim

    # -- scoring --------------------------------------------------------------------------------
    def token_log_probs(self, encoded, inputs: torch.Tensor) -> torch.Tensor:
        """Teacher-forced next-token log-probabilities (N, T, V) for decoder inputs (N, T)."""
        state, context, mask = encoded
        return self.decoder(inputs, self.decoder.start(state), state, context, mask)[0]

    def _log_likelihood(self, encoded, tokens: torch.Tensor, normalise: bool) -> torch.Tensor:
        sequence = with_boundaries(tokens, self.boundary_id)
        return sequence_log_likelihood(
            self.token_log_probs(encoded, sequence[:, :-1]), sequence[:, 1:], normalise
        )

    def score_candidates(self, encoded, candidates: torch.Tensor) -> torch.Tensor:
        batch, k, length = candidates.shape
        repeated = tuple(x.repeat_interleave(k, dim=0) for x in encoded)
        scores = self._log_likelihood(repeated, candidates.reshape(batch * k, length), self.length_normalise)
        return scores.view(batch, k)

    def forward(self, history: torch.Tensor, query: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
        return self.score_candidates(self.reader.read(history, query), candidates)

    def loss_and_logits(self, batch: dict, rank: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
        encoded = self.reader.read(batch["history"], batch["query"])
        target = batch.get("target")
        if target is None:  # no explicit form given: the gold candidate is the explicit form
            target = batch["candidates"][torch.arange(batch["label"].numel()), batch["label"]]
        sequence = with_boundaries(target, self.boundary_id)
        log_probs = self.token_log_probs(encoded, sequence[:, :-1])
        gold = sequence[:, 1:]
        loss = F.nll_loss(log_probs.reshape(-1, log_probs.shape[-1]), gold.reshape(-1), ignore_index=PAD_ID)
        return loss, (self.score_candidates(encoded, batch["candidates"]) if rank else None)

    # -- free text ------------------------------------------------------------------------------
    @torch.no_grad()
    def generate(
        self, history: torch.Tensor, query: torch.Tensor, max_len: int = 30, beam_size: int = 1
    ) -> torch.Tensor:
        """Greedy (beam_size=1) or beam search; hypotheses compared by length-normalised
        log-likelihood. Returns (B, <=max_len) token ids without boundaries, PAD after the end."""
        return self.decode(self.reader.read(history, query), max_len, beam_size)

    @torch.no_grad()
    def decode(self, encoded, max_len: int = 30, beam_size: int = 1) -> torch.Tensor:
        state, context, mask = (x.repeat_interleave(beam_size, dim=0) for x in encoded)
        n, k = encoded[0].shape[0], beam_size
        hidden = self.decoder.start(state)
        tokens = state.new_full((n * k, 1), self.boundary_id, dtype=torch.long)
        scores = state.new_full((n, k), float("-inf"))
        scores[:, 0] = 0.0  # one live hypothesis until the first expansion
        lengths = torch.zeros(n * k, device=state.device)
        finished = torch.zeros(n * k, dtype=torch.bool, device=state.device)
        for _ in range(max_len + 1):
            log_probs, hidden = self.decoder(tokens[:, -1:], hidden, state, context, mask)
            log_probs = log_probs[:, 0]
            vocab = log_probs.shape[-1]
            ended = torch.full_like(log_probs, float("-inf"))
            ended[:, PAD_ID] = 0.0  # a finished hypothesis only grows padding, at no cost
            log_probs = torch.where(finished.unsqueeze(1), ended, log_probs)
            total = (scores.view(-1, 1) + log_probs).view(n, k * vocab)
            scores, picked = total.topk(k, dim=-1)
            rows = (torch.arange(n, device=state.device).unsqueeze(1) * k + picked // vocab).view(-1)
            new = (picked % vocab).view(-1, 1)
            tokens = torch.cat([tokens[rows], new], dim=1)
            hidden = tuple(h[:, rows] for h in hidden)
            lengths = lengths[rows] + (~finished[rows]).float()
            finished = finished[rows] | new.squeeze(1).eq(self.boundary_id)
            if finished.all():
                break
        normalised = scores.view(-1) / lengths.clamp(min=1)
        best = normalised.view(n, k).argmax(-1) + torch.arange(n, device=state.device) * k
        out = tokens[best, 1:]
        # Cut at the end marker (and anything after it): what remains are the words.
        after_end = out.eq(self.boundary_id).cumsum(-1) > 0
        out = out.masked_fill(after_end, PAD_ID)[:, :max_len]
        keep = out.ne(PAD_ID).any(0).nonzero()
        return out[:, : int(keep.max()) + 1] if keep.numel() else out[:, :1]
