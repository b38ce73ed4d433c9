"""In-process causal LMs by resolved name: the tokenizer (and its chat template) and the weights load apart,
so a run answered wholly from the response cache never reads the weights; `tiny` is a random model for
tests."""

from __future__ import annotations

import torch

from pragexp.pretrained import Pretrained
from pragexp.pretrained.tokenizer import load_tokenizer

TINY_CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
TINY_CORPUS = (
    "Generate a short, concise single sentence response. Scenario: she asks him whether the dress fits. "
    "He answers that it could sweep the floor. What did he want to convey? Options: 1) 2) Answer: "
    "Thought: the speaker is being ironic. Response: Sure, I will help you right away."
)


def tiny_causal_lm(seed: int = 0):
    """A random 2-layer Llama (hidden 32) and a byte-level BPE tokenizer trained on a few sentences:
    any text encodes, nothing is downloaded."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>"]
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    raw.train_from_iterator([TINY_CORPUS], trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    tokenizer.chat_template = TINY_CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    return model, tokenizer


def load_causal_tokenizer(pretrained: Pretrained):
    """The tokenizer (with its chat template) without the weights, padding on the left (for generation) with a
    pad token (the end-of-text token where the model has none)."""
    tokenizer = (
        tiny_causal_lm()[1] if pretrained.source is None else load_tokenizer(pretrained, "the language model")
    )
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_causal_model(pretrained: Pretrained, dtype: str = "auto", quantization_config=None, tokenizer=None):
    """The weights, in eval mode on the CPU; a .gguf file's from its converted folder (`converted`), which a
    conversion writes with `tokenizer` (the file's, loaded already) when it is given."""
    if pretrained.source is None:
        return tiny_causal_lm()[0].eval()
    if pretrained.gguf_file and pretrained.local is not None and quantization_config is None:
        from pragexp.pretrained.converted import gguf_model

        return gguf_model(pretrained, dtype, tokenizer).eval()
    from transformers import AutoModelForCausalLM

    kwargs = {**pretrained.kwargs(), **({} if dtype == "auto" else {"dtype": getattr(torch, dtype)})}
    if quantization_config is not None:
        kwargs["quantization_config"] = quantization_config
    try:
        model = AutoModelForCausalLM.from_pretrained(pretrained.source, **kwargs)
    except OSError as err:
        raise pretrained.error(err, "the language model") from err
    return model.eval()
