"""`llm.finetune`: how an in-process causal LM learns when `model=llm` is trained (`pragexp.train`).

- `none`: frozen (prompting only; evaluation needs no checkpoint);
- `lora`: low-rank adapters through the `peft` library (Hu et al. 2021): `llm.lora.r`, `alpha`, `dropout` and
  `target_modules` (null: peft's default for the architecture, e.g. q_proj and v_proj for Llama, Mistral,
  Qwen and SmolLM); only the adapters train, and only they go into checkpoints;
- `full`: every weight trains (and goes into checkpoints).

`llm.gradient_checkpointing` trades compute for memory (transformers' own); `llm.quantization=4bit` loads the
base in 4-bit NF4 through `bitsandbytes` for QLoRA (Dettmers et al. 2023): CUDA only.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping

import torch
from torch import nn

FINETUNES = ("none", "lora", "full")
LORA_DEFAULTS = {"r": 8, "alpha": 16, "dropout": 0.05, "target_modules": None, "seed": 0}
QUANTIZATIONS = (None, "4bit")


def check_finetune(finetune: str, quantization: str | None = None) -> None:
    if finetune not in FINETUNES:
        raise ValueError(f"llm.finetune={finetune}: choose one of {', '.join(FINETUNES)}")
    if quantization not in QUANTIZATIONS:
        raise ValueError(f"llm.quantization={quantization}: choose null or 4bit")
    if quantization and finetune != "lora":
        raise ValueError(
            f"llm.quantization={quantization} trains adapters only: set llm.finetune=lora (QLoRA)"
        )
    if finetune == "lora" and importlib.util.find_spec("peft") is None:
        raise ImportError(
            "llm.finetune=lora needs the peft package: pip install peft (`make install` does it)"
        )


def quantization_config(quantization: str | None):
    """transformers' BitsAndBytesConfig for QLoRA, or None; a clear error where it cannot run."""
    if not quantization:
        return None
    if importlib.util.find_spec("bitsandbytes") is None:
        raise ImportError("llm.quantization=4bit (QLoRA) needs bitsandbytes: pip install bitsandbytes")
    if not torch.cuda.is_available():
        raise RuntimeError("llm.quantization=4bit (QLoRA) runs on a CUDA GPU only; this machine has none")
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16,
    )


def lora_settings(lora: Mapping | None) -> dict:
    """The LoRA settings as plain values (they are saved in checkpoints), defaults filled in."""
    settings = {**LORA_DEFAULTS, **dict(lora or {})}
    unknown = set(settings) - set(LORA_DEFAULTS)
    if unknown:
        raise ValueError(
            f"llm.lora: unknown setting(s) {', '.join(sorted(unknown))}; known: {', '.join(LORA_DEFAULTS)}"
        )
    targets = settings["target_modules"]
    if isinstance(targets, str):
        targets = [targets]
    return {
        "r": int(settings["r"]),
        "alpha": int(settings["alpha"]),
        "dropout": float(settings["dropout"]),
        "target_modules": [str(t) for t in targets] if targets else None,
        "seed": int(settings["seed"]),
    }


def make_trainable(
    model: nn.Module,
    finetune: str,
    lora: Mapping | None = None,
    gradient_checkpointing: bool = False,
    quantized: bool = False,
) -> nn.Module:
    """The model ready to train: wrapped in peft's LoRA (`lora`), or with every weight trainable (`full`)."""
    check_finetune(finetune)
    if finetune == "none":
        return model
    if gradient_checkpointing:
        # Non-reentrant: gradients reach the adapters even though the frozen embeddings need none.
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if finetune == "full":
        for p in model.parameters():
            p.requires_grad_(True)
        return model
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

    if quantized:
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=gradient_checkpointing)
    s = lora_settings(lora)
    config = LoraConfig(
        r=s["r"],
        lora_alpha=s["alpha"],
        lora_dropout=s["dropout"],
        target_modules=s["target_modules"],  # None: peft's default for the architecture
        bias="none",
        task_type="CAUSAL_LM",
    )
    # The adapters' random start from their own seed: the same whatever ran before (`llm.lora.seed`).
    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(s["seed"])
        return get_peft_model(model, config)
