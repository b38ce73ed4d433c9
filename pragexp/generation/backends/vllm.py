"""`llm=vllm`: vLLM in-process, for GPU users (`pip install 'pragexp[vllm]'`; `make install` does not install
it). Generation with the model's chat template; options scored from vLLM's prompt log-probs, each context
paired with each option as `requests.encode_request` says. A reply is decoded with its special tokens and
stripped of them but for the reasoning markers (`special_tokens`: vLLM's default decoding would drop a
`<think>` that the tokenizer registers as special)."""

from __future__ import annotations

from collections.abc import Sequence

from pragexp.generation.backends.base import (
    GenerationParams,
    LLMBackend,
    Prompt,
    stream_seed,
    template_kwargs,
    with_system,
)
from pragexp.generation.reasoning.special_tokens import strip_special
from pragexp.generation.scoring.requests import ChoiceRequest, OptionScore, encode_request
from pragexp.pretrained import files_digest
from pragexp.prompting.reasoning import DEFAULT_MARKERS, check_markers

MISSING = (
    "llm=vllm needs vLLM, which pragexp does not install by default: pip install 'pragexp[vllm]' (a CUDA GPU)"
)


def import_vllm():
    try:
        import vllm
    except ImportError as err:
        raise ImportError(MISSING) from err
    return vllm


class VLLMBackend(LLMBackend):
    name = "vllm"

    def __init__(
        self,
        model: str,
        revision: str | None = None,
        chat_template: bool = True,
        system_prompt: str | None = None,
        dtype: str = "auto",
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        chat_template_kwargs: dict | None = None,
        reasoning_markers: Sequence[str] | None = None,
        replay: bool | str = "auto",
    ):
        super().__init__()
        self.replay = replay  # the response cache's (`generation.cache.replay`): never part of the identity
        self.reasoning_markers = check_markers(reasoning_markers or DEFAULT_MARKERS)
        self.model_name, self.revision = model, revision
        self.use_chat_template, self.system_prompt = chat_template, system_prompt
        self.template_kwargs = template_kwargs(chat_template_kwargs)
        self.engine_args = {
            "model": model,
            "revision": revision,
            "dtype": dtype,
            "tensor_parallel_size": int(tensor_parallel_size),
            "gpu_memory_utilization": float(gpu_memory_utilization),
            "max_model_len": max_model_len,
        }
        self._llm = None
        self._identity: dict | None = None
        import_vllm()  # fail at start-up, not after the data is read

    def identity(self) -> dict:
        """The model (name, revision, the files behind a local folder) and its dtype, how a raw prompt is put
        to it and which reasoning markers its replies keep. vLLM has no address to name; how it schedules and
        splits the work (`tensor_parallel_size`, `gpu_memory_utilization`) is left out: it changes float
        rounding only, as a server's batching does (vLLM's answers are not bit-reproducible across batches
        anyway), so the same model on another node or GPU count answers from the cache, as through
        `llm=openai`. `max_model_len` is left out: a longer prompt is refused, never answered otherwise."""
        if self._identity is None:
            self._identity = {
                "backend": self.name,
                "model": self.model_name,
                "revision": self.revision,
                "files": files_digest(self.model_name),  # a local folder; None for a hub name (its revision)
                "dtype": self.engine_args["dtype"],
                "chat_template": self.use_chat_template,
                "system_prompt": self.system_prompt,
                "chat_template_kwargs": self.template_kwargs,
                "reasoning_markers": list(
                    self.reasoning_markers
                ),  # replies keep these where they are special
            }
        return self._identity

    def named_by(self) -> dict:
        """The identity less the files' digest (a replay needs no model on this machine)."""
        return {k: v for k, v in self.identity().items() if k != "files"}

    def load(self):
        if self._llm is None:
            self._llm = import_vllm().LLM(**{k: v for k, v in self.engine_args.items() if v is not None})
        return self._llm

    def generate_samples(self, prompts: list[Prompt], params: GenerationParams, sample: int) -> list[str]:
        vllm, llm = import_vllm(), self.load()
        # One SamplingParams per prompt: vLLM gives a request with a seed its own generator, so a draw's
        # stream is named by (seed, prompt, temperature, top_p, draw) and not by its batch-mates.
        sampling = [
            vllm.SamplingParams(
                temperature=params.temperature,
                top_p=params.top_p,
                max_tokens=params.max_new_tokens,
                seed=stream_seed(params, sample, p.seed_key),
                ignore_eos=params.ignore_eos,
                skip_special_tokens=False,  # the reasoning markers stay; the other special tokens go below
                spaces_between_special_tokens=False,
            )
            for p in prompts
        ]
        if prompts and all(p.templated for p in prompts):  # already the model's text (`chat_text`)
            outputs = llm.generate([p.text + p.prefill for p in prompts], sampling, use_tqdm=False)
        elif self.use_chat_template:
            outputs = self._chat(llm, prompts, sampling)
        else:
            outputs = llm.generate([p.text + p.prefill for p in prompts], sampling, use_tqdm=False)
        self.calls += 1
        tokenizer = llm.get_tokenizer()
        return [strip_special(o.outputs[0].text, tokenizer, self.reasoning_markers) for o in outputs]

    def _chat(self, llm, prompts: list[Prompt], sampling: list) -> list:
        """Raw prompts as user turns through vLLM's chat call, its template called with
        `chat_template_kwargs`; a prompt with a `prefill` goes on from it as the assistant's unfinished turn
        (one call for each kind)."""
        system = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        outputs: list = [None] * len(prompts)
        for goes_on in (False, True):
            chosen = [i for i, p in enumerate(prompts) if bool(p.prefill) == goes_on]
            if not chosen:
                continue
            conversations = [
                [*system, {"role": "user", "content": prompts[i].text}]
                + ([{"role": "assistant", "content": prompts[i].prefill}] if goes_on else [])
                for i in chosen
            ]
            answers = llm.chat(
                conversations,
                [sampling[i] for i in chosen],
                use_tqdm=False,
                chat_template_kwargs=self.template_kwargs or None,
                add_generation_prompt=not goes_on,
                continue_final_message=goes_on,
            )
            for i, answer in zip(chosen, answers, strict=True):
                outputs[i] = answer
        return outputs

    def chat_text(self, messages: list[dict]) -> str | None:
        """Chat turns through the model's chat template (vLLM's tokenizer, called with
        `chat_template_kwargs`), or None with `chat_template: false`."""
        if not self.use_chat_template:
            return None
        tokenizer = self.load().get_tokenizer()
        return tokenizer.apply_chat_template(
            with_system(self.system_prompt, messages),
            add_generation_prompt=True,
            tokenize=False,
            **self.template_kwargs,
        )

    def count_tokens(self, text: str) -> int:
        return len(self.load().get_tokenizer()(text, add_special_tokens=False)["input_ids"])

    def first_tokens(self, text: str, n: int) -> str:
        tokenizer = self.load().get_tokenizer()
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        return text if len(ids) <= n else tokenizer.decode(ids[:n])

    def loglikelihood_many(self, requests: list[ChoiceRequest]) -> list[list[OptionScore]]:
        vllm, llm = import_vllm(), self.load()
        tokenizer = llm.get_tokenizer()
        encoded = [encode_request(tokenizer, r) for r in requests]
        sequences = [(e.context, c) for e in encoded for c in e.continuations]
        outputs = llm.generate(
            [{"prompt_token_ids": list(ctx + cont)} for ctx, cont in sequences],
            vllm.SamplingParams(max_tokens=1, prompt_logprobs=0),
            use_tqdm=False,
        )
        self.calls += 1
        logliks = iter(
            sum(out.prompt_logprobs[len(ctx) + j][token].logprob for j, token in enumerate(cont))
            for out, (ctx, cont) in zip(outputs, sequences, strict=True)
        )
        return [
            [
                OptionScore(float(next(logliks)), len(c), len(t.encode("utf-8")))
                for c, t in zip(e.continuations, e.texts, strict=True)
            ]
            for e in encoded
        ]
