"""A pretrained model's tokenizer by resolved name, as transformers' AutoTokenizer loads it."""

from __future__ import annotations

from pragexp.pretrained import Pretrained
from pragexp.pretrained.converted import gguf_tokenizer


def load_tokenizer(pretrained: Pretrained, what: str = "the tokenizer of"):
    """transformers' AutoTokenizer for a resolved name (a .gguf's from its converted folder, parsed once);
    a load error carries the setting's offline hint."""
    if pretrained.gguf_file:
        return gguf_tokenizer(pretrained)
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(pretrained.source, **pretrained.kwargs())
    except OSError as err:
        raise pretrained.error(err, what) from err
