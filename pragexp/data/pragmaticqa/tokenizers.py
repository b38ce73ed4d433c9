"""PragmatiCQA's tokenizers: the retriever's two encoders' and the reader's, all kept in checkpoints.

- The retrieval encoders bring their own tokenizer (`retriever.query_encoder`, `retriever.passage_encoder`:
  a hub name or `minilm`); `tiny` is trained on the corpus's passages, so both sides of the tiny bi-encoder
  share it. `RetrievalTokenizers` loads (or trains) each once per corpus and hands each side its own copy,
  cut at that side's length.
- The reader's (`data.tokenizer`, i.e. `model.pretrained`; `tiny` is trained on the training texts and the
  corpus) becomes the reader's `ReaderText`, with the answer format's tags added as special tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from tokenizers import Tokenizer

from pragexp.data.common import tokenization as tt
from pragexp.data.pragmaticqa.corpus import Corpus
from pragexp.retrieval.encoders import SETTING as RETRIEVER_SETTING
from pragexp.retrieval.spec import EncoderSpec
from pragexp.utils.io import digest


class EncoderTokenizer:
    """A retrieval encoder's tokenizer, cut at its input length and padded to each batch's longest."""

    def __init__(self, tokenizer: Tokenizer, max_length: int):
        self.tokenizer = tt.configure(tokenizer, max_length)

    @classmethod
    def from_str(cls, saved: str, max_length: int) -> EncoderTokenizer:
        return cls(Tokenizer.from_str(saved), max_length)

    def to_str(self) -> str:
        return self.tokenizer.to_str()

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()

    def digest(self) -> str:
        return digest(self.to_str())

    def encode(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        return tt.encode_batch(self.tokenizer, texts)

    def encode_pairs(self, pairs: Sequence[tuple[str, str]]) -> dict[str, torch.Tensor]:
        titles, texts = zip(*pairs, strict=True)
        return tt.encode_batch(self.tokenizer, titles, texts)


class RetrievalTokenizers:
    """Each encoder's tokenizer, loaded (or trained) once per corpus."""

    def __init__(self, tiny_vocab_size: int):
        self.tiny_vocab_size = tiny_vocab_size
        self._bases: dict[tuple[str, str], Tokenizer] = {}  # (encoder, corpus key) -> loaded or trained

    def __call__(self, encoder: EncoderSpec, corpus: Corpus) -> EncoderTokenizer:
        base = self._bases.get((encoder.name, corpus.key))
        if base is None:
            texts = (t for p in corpus.passages for t in (p.title, p.text))  # read by `tiny` only
            base = tt.build_tokenizer(encoder.name, texts, self.tiny_vocab_size, setting=RETRIEVER_SETTING)
            self._bases[(encoder.name, corpus.key)] = base
        return EncoderTokenizer(Tokenizer.from_str(base.to_str()), encoder.max_length)
