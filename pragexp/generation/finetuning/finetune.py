"""How an in-process causal LM learns when `model=llm` is trained (`pragexp.train ...
llm.finetune=lora|full`), in one place: the settings, the backend it needs, what trains, and what a checkpoint
holds.

- Settings: `llm.finetune` is `none` (frozen: prompting only, evaluation needs no checkpoint), `lora`
  (low-rank adapters through peft, Hu et al. 2021: `llm.lora.r`, `alpha`, `dropout`, `target_modules` (null:
  peft's default for the architecture, q_proj and v_proj for Llama, Mistral, Qwen and SmolLM), `seed` (the
  adapters' random start), `layers` (null: every layer; a list of layer numbers: only those get adapters, and
  with the lower layers left alone the backward pass stops at the lowest adapted one: on a CPU, adapting the
  top third of the layers makes a step about twice as fast)) or `full` (every weight).
  `llm.gradient_checkpointing` trades compute for memory; `llm.quantization=4bit` loads the base in NF4
  through bitsandbytes for QLoRA (Dettmers et al. 2023; CUDA only).
- The backend: fine-tuning needs the model in this process (`TunableBackend`: `llm=hf` implements it); any
  other backend is refused by name at start (`tunable`).
- What trains: a choice task (Circa, GRICE, ...) learns the cross-entropy over its options' scores, computed
  by the very scorer evaluation ranks with (`choice_scores`: `scorer.option_logliks` with gradients,
  normalised as `prompt.scoring` says), so prompted and tuned numbers mean the same thing; a writer
  (PragmatiCQA's reader) learns its target text after the prompt, closed by the end-of-text token
  (`target_nll`).
- Checkpoints hold only what trained (the adapters, or every weight for `full`: `keep_trained_weights`) and
  the base model's identity, checked when loaded; beside each checkpoint the tuned weights are also written in
  peft's own folder format: `generation.finetuning.adapters`, the one module that saves, loads and checks
  them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from typing import Protocol

import torch
from torch import nn

from pragexp.generation.scoring.requests import ChoiceRequest
from pragexp.generation.scoring.scorer import option_logliks
from pragexp.utils.contracts import require

FINETUNES = ("none", "lora", "full")
LORA_DEFAULTS = {"r": 8, "alpha": 16, "dropout": 0.05, "target_modules": None, "seed": 0, "layers": None}
# What each `llm.quantization` loads the base with (bitsandbytes' settings, as plain data: part of the
# backend's identity, so that answers of one quantization never stand for another's).
QUANTIZATION = {
    "4bit": {
        "load_in_4bit": True,
        "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_use_double_quant": True,
        "bnb_4bit_compute_dtype": "bfloat16",
    }
}
QUANTIZATIONS = (None, *QUANTIZATION)
# The LoRA settings that change what tuned weights answer; the others do not: dropout is off in evaluation,
# and the seed's effect (the adapters' start) is in the weights themselves.
LORA_FORWARD = ("r", "alpha", "target_modules", "layers")


# -- settings -----------------------------------------------------------------------------------------------


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


def quantization_settings(quantization: str | None) -> dict | None:
    """What `llm.quantization` loads the base with (bits, quantisation type, double quantisation, compute
    dtype), as plain data; None when the base is not quantised."""
    return dict(QUANTIZATION[quantization]) if quantization else None


def quantization_config(quantization: str | None):
    """transformers' BitsAndBytesConfig for QLoRA, or None; a clear error where it cannot run."""
    settings = quantization_settings(quantization)
    if settings is None:
        return None
    if importlib.util.find_spec("bitsandbytes") is None:
        raise ImportError("llm.quantization=4bit (QLoRA) needs bitsandbytes: pip install bitsandbytes")
    if not torch.cuda.is_available():
        raise RuntimeError("llm.quantization=4bit (QLoRA) runs on a CUDA GPU only; this machine has none")
    from transformers import BitsAndBytesConfig

    compute = getattr(torch, settings.pop("bnb_4bit_compute_dtype"))
    return BitsAndBytesConfig(**settings, bnb_4bit_compute_dtype=compute)


def lora_identity(lora: Mapping | None) -> dict | None:
    """The LoRA settings that change what tuned weights answer (`LORA_FORWARD`); None without LoRA."""
    return None if lora is None else {k: lora_settings(lora)[k] for k in LORA_FORWARD}


def lora_settings(lora: Mapping | None) -> dict:
    """The LoRA settings as plain values (they are saved in checkpoints), defaults filled in."""
    settings = {**LORA_DEFAULTS, **dict(lora or {})}
    unknown = set(settings) - set(LORA_DEFAULTS)
    if unknown:
        raise ValueError(
            f"llm.lora: unknown setting(s) {', '.join(sorted(unknown))}; known: {', '.join(LORA_DEFAULTS)}"
        )
    targets, layers = settings["target_modules"], settings["layers"]
    if isinstance(targets, str):
        targets = [targets]
    if isinstance(layers, int):
        layers = [layers]
    return {
        "r": int(settings["r"]),
        "alpha": int(settings["alpha"]),
        "dropout": float(settings["dropout"]),
        "target_modules": [str(t) for t in targets] if targets else None,
        "seed": int(settings["seed"]),
        "layers": sorted(int(n) for n in layers) if layers is not None else None,
    }


# -- the backend --------------------------------------------------------------------------------------------


class TunableBackend(Protocol):
    """What fine-tuning asks of an LLM backend: the model in this process, made trainable on request."""

    name: str
    finetune: str
    lora: dict | None  # the LoRA settings (llm.finetune=lora), as saved in checkpoints
    batch_size: int  # distinct contexts per scoring pass

    def load(self) -> tuple:
        """(model, tokenizer)."""
        ...

    def trainable_model(self) -> nn.Module:
        """The model made trainable as `finetune` says; the backend's later calls use this same module."""
        ...

    def base_identity(self) -> dict:
        """What names the base weights (checked against a checkpoint's)."""
        ...

    def identity(self) -> dict:
        """Everything but the training settings and the weights that decides an answer
        (`backend.LLMBackend`)."""
        ...

    def key_identity(self, method: str) -> dict:
        """The part of `identity` that a call of kind `method` reads."""
        ...

    def training_identity(self) -> dict:
        """The training settings that change what the tuned weights answer (`finetune`, `lora_identity`)."""
        ...


def tunable(backend) -> TunableBackend:
    """`backend` as fine-tuning uses it; another backend than an in-process one is refused, naming it."""
    require(
        backend,
        TunableBackend,
        f"llm.finetune={backend.finetune} trains an in-process model; llm backend {backend.name!r}",
        "use llm=hf",
    )
    return backend


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
        # (transformers >= 5 calls it activation checkpointing.)
        kwargs = {"use_reentrant": False}
        if hasattr(model, "activation_checkpointing_enable"):
            model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
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
        layers_to_transform=s["layers"],  # None: every layer
        bias="none",
        task_type="CAUSAL_LM",
    )
    # The adapters' random start from their own seed: the same whatever ran before (`llm.lora.seed`).
    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(s["seed"])
        return get_peft_model(model, config)


# -- what trains --------------------------------------------------------------------------------------------


def choice_scores(
    backend: TunableBackend, requests: Sequence[ChoiceRequest], normalization: str = "sum"
) -> list[torch.Tensor]:
    """Per request, its options' scores with gradients, as evaluation computes them: log-likelihoods summed,
    or per token (`per_token`) or per UTF-8 byte (`per_byte`); on the model's device."""
    model, tokenizer = backend.trainable_model(), backend.load()[1]
    rows = []
    for values, counts in option_logliks(model, tokenizer, requests, backend.batch_size):
        if normalization == "per_token":
            values = values / values.new_tensor([c.tokens for c in counts])
        elif normalization == "per_byte":
            values = values / values.new_tensor([max(c.bytes, 1) for c in counts])
        elif normalization != "sum":
            raise ValueError(
                f"fine-tuning ranks the options by their log-likelihood: prompt.scoring=sum, per_token or "
                f"per_byte, not {normalization}"
            )
        rows.append(values)
    return rows


def target_nll(
    backend: TunableBackend, contexts: Sequence[str], targets: Sequence[str]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per context: the summed negative log-likelihood of its target text closed by the end-of-text token (so
    that a tuned model learns to stop), and the number of target tokens (a writer's loss and dev
    perplexity)."""
    model, tokenizer = backend.trainable_model(), backend.load()[1]
    end = tokenizer.eos_token or ""
    requests = [ChoiceRequest(c, (t + end,)) for c, t in zip(contexts, targets, strict=True)]
    scored = option_logliks(model, tokenizer, requests, backend.batch_size)
    nll = torch.stack([-values[0] for values, _ in scored])
    tokens = torch.tensor([counts[0].tokens for _, counts in scored], device=nll.device)
    return nll, tokens


# -- checkpoints --------------------------------------------------------------------------------------------


def keep_trained_weights(module: nn.Module, attribute: str = "lm") -> None:
    """Make `module`'s state dict hold, of its submodule `attribute` (the tuned model), only the weights that
    train (LoRA: the adapters): the frozen base comes from `llm.model`, so it is neither saved nor missed when
    a checkpoint is loaded."""
    at = f"{attribute}."

    def trained(prefix: str) -> set[str]:
        return {prefix + at + n for n, p in getattr(module, attribute).named_parameters() if p.requires_grad}

    def drop_frozen(module, state_dict, prefix, local_metadata) -> None:
        keep = trained(prefix)
        for key in [k for k in state_dict if k.startswith(prefix + at) and k not in keep]:
            del state_dict[key]

    def remember_prefix(module, state_dict, prefix, *args) -> None:
        module._tuned_prefix = prefix  # where the module sits in the checkpoint, for the post hook

    def frozen_not_missing(module, incompatible) -> None:
        prefix = getattr(module, "_tuned_prefix", "")
        keep = trained(prefix)
        incompatible.missing_keys[:] = [
            k for k in incompatible.missing_keys if not (k.startswith(prefix + at) and k not in keep)
        ]

    module.register_state_dict_post_hook(drop_frozen)
    module.register_load_state_dict_pre_hook(remember_prefix)
    module.register_load_state_dict_post_hook(frozen_not_missing)
