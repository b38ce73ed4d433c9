"""`llm=openai`: any OpenAI-compatible server — vLLM's `vllm serve`, TGI, Ollama, the llama.cpp
server, or a hosted API.

The key is read from the environment variable NAMED by `api_key_env` when a request is made; it is
never stored on the object, in a config, a log or a W&B run (a local server needs none). Requests
time out after `timeout` seconds and are retried `max_retries` times with exponential backoff on
429, 5xx and network errors (honouring Retry-After); at most `concurrency` are in flight.

- generate: `/chat/completions` (`chat: true`, the server applies the model's chat template, with
  `chat_template_kwargs` in the request) or `/completions`; one request per prompt and draw, with a per-draw
  `seed` where the server honours it; a server's separate `reasoning_content` comes back between `<think>`
  markers (`with_reasoning`), so that the reasoning is cut as a model's own is.
- loglikelihood_many: `/completions` with `echo` and `logprobs` (the prompt's own token log-probs), after a
  check that the server's echo is right (`check_echo`): a server or model that does not offer them, or
  whose echoed log-probs disagree with its own next-token log-probs, gets a clear error.
- embed: `/embeddings`.

The response cache names the server by what it serves, not by its address (`served`): the same model behind
another node, port or restart answers from the cache; another model under the same name does not.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import torch

from pragexp.generation.backends import served
from pragexp.generation.backends.base import (
    GenerationParams,
    LLMBackend,
    Prompt,
    ServerUnreachable,
    UnsupportedCall,
    stream_seed,
    template_kwargs,
)
from pragexp.generation.scoring.requests import ChoiceRequest, OptionScore, split_trailing_space
from pragexp.prompting.reasoning import DEFAULT_MARKERS

log = logging.getLogger(__name__)
RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class APIError(RuntimeError):
    pass


class Unreachable(APIError, ServerUnreachable):
    """No answer after every retry (network errors, statuses worth a retry): the response cache may replay."""


class Refused(APIError):
    """The server answered that it does not do this (a 4xx other than a missing or wrong key, or a rate
    limit)."""


def with_reasoning(choice: dict) -> str:
    """A chat reply as one text: a server that parses the reasoning out (vLLM's `--reasoning-parser`:
    `reasoning_content`, or `reasoning`) gets it back between the default markers, left open when the server
    stopped at its token limit before any answer (an unfinished thought is no answer)."""
    message = choice.get("message") or {}
    content = message.get("content") or ""
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if not reasoning:
        return content
    start, end = DEFAULT_MARKERS
    if not content and choice.get("finish_reason") == "length":
        return f"{start}{reasoning}"
    return f"{start}{reasoning}{end}{content}"


class OpenAIBackend(LLMBackend):
    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key_env: str | None = "OPENAI_API_KEY",
        chat: bool = True,
        system_prompt: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        concurrency: int = 8,
        revision: str | None = None,
        chat_template_kwargs: dict | None = None,
        fingerprints: str | None = None,
        replay: bool | str = "auto",
    ):
        super().__init__()
        self.replay = replay  # the response cache's (`generation.cache.replay`): never part of the identity
        if not model:
            raise ValueError("llm=openai needs llm.model=<the server's model name>")
        self.model, self.base_url = model, base_url.rstrip("/")
        self.address = self.base_url
        self.api_key_env, self.chat, self.system_prompt = api_key_env, chat, system_prompt
        self.timeout, self.max_retries, self.backoff = float(timeout), int(max_retries), float(backoff)
        self.concurrency, self.revision = max(1, int(concurrency)), revision
        self._echo_checked, self._echo_lock = False, threading.Lock()
        self.template_kwargs = template_kwargs(chat_template_kwargs)
        self.fingerprints = served.Fingerprints(fingerprints)
        self._served: dict | None = None
        self._served_lock = threading.Lock()

    def identity(self) -> dict:
        """The model the server serves (`served`), not its address, and how a raw prompt is put to it. The
        address, the key's variable, timeouts, retries and `concurrency` are not in it: they change no
        answer."""
        return {**self.named_by(), **self.served()}

    def named_by(self) -> dict:
        """The identity's settings, less what the server serves (asking it is what a replay avoids)."""
        return {
            "backend": self.name,
            "model": self.model,
            "revision": self.revision,
            "chat": self.chat,
            "system_prompt": self.system_prompt,
            "chat_template_kwargs": self.template_kwargs,
        }

    def served(self) -> dict:
        """What the server serves under `model` (`generation.backends.served`): what `/v1/models` says of it
        and the fingerprint of a probe's log-probabilities, or its address where it gives none; asked once."""
        with self._served_lock:
            if self._served is None:
                try:
                    listed = self._request("GET", "/models", counted=False).get("data") or []
                    fields = served.served_fields(listed, self.model)
                except Refused:  # no model list: the probe alone names the weights
                    fields = {}
                try:
                    asked = served.probe_request(self.model)
                    probe = served.probe_values(self._request("POST", "/completions", asked, counted=False))
                except Refused:
                    probe = None
                if probe is None:
                    log.warning(
                        "%s gives no probe log-probabilities: answers cached by its address", self.base_url
                    )
                    self._served = {"served": fields, "address": self.base_url}
                else:
                    name = {"model": self.model, "revision": self.revision, "served": fields}
                    self._served = {"served": fields, "weights": self.fingerprints.match(name, *probe)}
        return self._served

    # -- HTTP ----------------------------------------------------------------------------------
    def _headers(self) -> dict:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _post(self, path: str, body: dict) -> dict:
        return self._request("POST", path, body)

    def _request(self, method: str, path: str, body: dict | None = None, counted: bool = True) -> dict:
        """The server's JSON answer, retried as the module docstring says; `counted`: a call for an answer
        (`calls`), not one that asks what the server serves."""
        import httpx

        url = f"{self.base_url}{path}"
        for attempt in range(self.max_retries + 1):
            wait = self.backoff * 2**attempt
            try:
                response = httpx.request(
                    method, url, json=body, headers=self._headers(), timeout=self.timeout
                )
            except (httpx.TimeoutException, httpx.TransportError) as err:
                problem = f"{type(err).__name__}: {err}"
            else:
                if response.status_code < 300:
                    self.calls += counted
                    return response.json()
                problem = f"HTTP {response.status_code}: {response.text[:300]}"
                if response.status_code not in RETRY_STATUS:
                    refused = 400 <= response.status_code < 500 and response.status_code not in (401, 403)
                    raise (Refused if refused else APIError)(
                        self._explain(path, response.status_code, problem)
                    )
                after = response.headers.get("retry-after")
                if after and after.replace(".", "", 1).isdigit():
                    wait = max(wait, float(after))
            if attempt < self.max_retries:
                log.warning(
                    "%s failed (%s); retry %d/%d in %.1fs", url, problem, attempt + 1, self.max_retries, wait
                )
                time.sleep(wait)
        raise Unreachable(f"{url}: gave up after {self.max_retries + 1} attempts; last: {problem}")

    def _explain(self, path: str, status: int, problem: str) -> str:
        if status in (401, 403):
            where = f"the environment variable {self.api_key_env}" if self.api_key_env else "llm.api_key_env"
            return f"{self.base_url}{path}: {problem} (is the API key in {where}?)"
        return f"{self.base_url}{path}: {problem}"

    def _map(self, fn, jobs: list, done=None) -> list:
        """[fn(job) per job], at most `concurrency` at once; `done(i, result)` (in this thread) as each
        returns."""
        results: list = [None] * len(jobs)
        if self.concurrency == 1 or len(jobs) <= 1:
            for i, job in enumerate(jobs):
                results[i] = fn(job)
                if done:
                    done(i, results[i])
            return results
        failure = None
        with ThreadPoolExecutor(self.concurrency) as pool:
            futures = {pool.submit(fn, job): i for i, job in enumerate(jobs)}
            try:
                for future in as_completed(futures):  # after a failed request the others go on (and are kept)
                    if future.exception() is not None:
                        failure = failure or future.exception()
                        continue
                    results[futures[future]] = future.result()
                    if done:
                        done(futures[future], future.result())
            except BaseException:  # `done` failed (a full disk) or a signal stopped the run: ask no more
                for future in futures:
                    future.cancel()
                raise
        if failure is not None:
            raise failure
        return results

    # -- calls ---------------------------------------------------------------------------------
    def generate_samples(self, prompts: list[Prompt], params: GenerationParams, sample: int) -> list[str]:
        common = {
            "model": self.model,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_new_tokens,
            "n": 1,
        }
        if params.ignore_eos:
            common["ignore_eos"] = True  # vLLM's extension; other servers may ignore or refuse it

        def one(prompt: Prompt) -> str:
            # A seed per draw of each prompt, for servers that honour it (vLLM gives it its own generator).
            body = {**common, "seed": stream_seed(params, sample, prompt.seed_key)}
            if self.chat:
                out = self._post("/chat/completions", {**body, **self._chat_body(prompt)})
                return with_reasoning(out["choices"][0])
            out = self._post("/completions", {**body, "prompt": prompt.text + prompt.prefill})
            return out["choices"][0].get("text") or ""

        # each reply stored as it comes (the response cache)
        return self._map(one, prompts, self.answer_arrived)

    def _chat_body(self, prompt: Prompt) -> dict:
        """The chat request's own fields: the turns, `chat_template_kwargs` (vLLM and SGLang pass them to the
        template), and a `prefill` as the assistant's unfinished turn that the server goes on from (vLLM's
        `continue_final_message`)."""
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        messages.append({"role": "user", "content": prompt.text})
        body: dict = {"messages": messages}
        if self.template_kwargs:
            body["chat_template_kwargs"] = self.template_kwargs
        if prompt.prefill:
            messages.append({"role": "assistant", "content": prompt.prefill})
            body.update(add_generation_prompt=False, continue_final_message=True)
        return body

    def loglikelihood_many(self, requests: list[ChoiceRequest]) -> list[list[OptionScore]]:
        """Each option scored from the server's echo of context + option, paired as `requests` says (the
        context's trailing whitespace moves into the continuation; the server tokenises)."""
        other = {r.pairing for r in requests} - {"lm-eval"}
        if other:
            raise UnsupportedCall(self.name, f"the {other.pop()} pairing", "the server tokenises: use llm=hf")
        if requests:
            self.check_echo(requests[0].context)

        def one(pair: tuple[str, str]) -> OptionScore:
            ctx, cont = split_trailing_space(*pair)
            logprobs = self._echo(ctx + cont)
            offsets, values = logprobs["text_offset"], logprobs["token_logprobs"]
            # The prompt's tokens from the continuation on; the generated token (offset past the end) is not.
            picked = [v for o, v in zip(offsets, values, strict=True) if len(ctx) <= o < len(ctx) + len(cont)]
            if not picked or any(v is None for v in picked):
                raise APIError(
                    f"{self.base_url}/completions: no log-prob for {cont!r}: {self._no_logprobs()}"
                )
            return OptionScore(float(sum(picked)), len(picked), len(cont.encode("utf-8")))

        pairs = [(r.context, o) for r in requests for o in r.options]
        owner = [i for i, r in enumerate(requests) for _ in r.options]  # pair -> its request
        starts = list(itertools.accumulate((len(r.options) for r in requests), initial=0))
        left, got = [len(r.options) for r in requests], [None] * len(pairs)

        def done(p: int, score: OptionScore) -> None:  # a request's scores stored once all its options came
            got[p], i = score, owner[p]
            left[i] -= 1
            if left[i] == 0:
                self.answer_arrived(i, got[starts[i] : starts[i + 1]])

        scores = iter(self._map(one, pairs, done))
        return [[next(scores) for _ in r.options] for r in requests]

    def _echo(self, text: str) -> dict:
        """The server's log-probs of `text`'s own tokens (echo), checked for shape."""
        body = {
            "model": self.model,
            "prompt": text,
            "max_tokens": 1,
            "temperature": 0.0,
            "echo": True,
            "logprobs": 1,
        }
        try:
            out = self._post("/completions", body)
        except APIError as err:
            raise APIError(f"{err} — {self._no_logprobs()}") from err
        logprobs = (out.get("choices") or [{}])[0].get("logprobs") or {}
        tokens, offsets, values = (logprobs.get(k) for k in ("tokens", "text_offset", "token_logprobs"))
        if not tokens or not offsets or not values or not len(tokens) == len(offsets) == len(values):
            raise APIError(f"{self.base_url}/completions returned no prompt log-probs: {self._no_logprobs()}")
        return logprobs

    def _next_tokens(self, prefix: str, k: int = 5) -> list[tuple[str, float]]:
        """The server's most likely next tokens after `prefix` and their log-probs, best first, as a
        one-token completion at temperature 0 reports them (no echo)."""
        body = {"model": self.model, "prompt": prefix, "max_tokens": 1, "temperature": 0.0, "logprobs": k}
        try:
            out = self._post("/completions", body)
        except APIError as err:
            raise APIError(f"{err} — {self._no_logprobs()}") from err
        logprobs = (out.get("choices") or [{}])[0].get("logprobs") or {}
        top = (logprobs.get("top_logprobs") or [None])[0] or {}
        if not top and logprobs.get("tokens") and logprobs.get("token_logprobs"):
            top = {logprobs["tokens"][0]: logprobs["token_logprobs"][0]}
        if not top:
            raise APIError(f"{self.base_url}/completions returned no log-probs: {self._no_logprobs()}")
        ranked = sorted(((t, float(v)) for t, v in top.items() if t and v is not None), key=lambda x: -x[1])
        return [(t, v) for t, v in ranked if math.isfinite(v)]

    def check_echo(self, context: str, candidates: int = 3) -> None:
        """Refuse a server whose echoed prompt log-probs are not what it says they are, before trusting
        any: the log-prob it gives token t as the one-token completion of a prefix must be the log-prob
        it echoes for t at the end of prefix+t. llama-cpp-python's server (0.3.x) fails this for models
        without a BOS token (SmolLM2): it echoes at each token the log-prob that the next position's
        distribution gives it, so every score is wrong (about -21 where the right ones are -2 to -3).
        Checked once per backend, on the first context (its trailing whitespace stripped)."""
        with self._echo_lock:
            if self._echo_checked:
                return
            prefix = split_trailing_space(context, "")[0] or "The"
            tried = []
            for token, expected in self._next_tokens(prefix)[:candidates]:
                logprobs = self._echo(prefix + token)
                at_end = [i for i, o in enumerate(logprobs["text_offset"]) if o == len(prefix)]
                if not at_end or logprobs["tokens"][at_end[0]] != token:
                    tried.append(repr(token))  # merged with the prefix's last token: try the next one
                    continue
                echoed = logprobs["token_logprobs"][at_end[0]]
                if echoed is None or abs(echoed - expected) > 0.05 + 0.01 * abs(expected):
                    shown = "none" if echoed is None else f"{echoed:.3f}"
                    raise APIError(
                        f"{self.base_url}: refusing its log-likelihoods: after {prefix[-40:]!r} the token "
                        f"{token!r} has log-prob {expected:.3f} as a one-token completion but {shown} in "
                        "the echoed prompt; the echo is off (llama-cpp-python's server 0.3.x shifts it by "
                        "one token for models without a BOS token), so every score would be wrong. Use "
                        "llm=hf (in-process transformers; it reads GGUF files) or llm=vllm, or serve the "
                        "model with a server whose echo is right (vLLM's `vllm serve`)"
                    )
                self._echo_checked = True
                return
            raise APIError(
                f"{self.base_url}: cannot check its echoed log-probs: none of the likely next tokens after "
                f"{prefix[-40:]!r} ({', '.join(tried) or 'none reported'}) comes back as a token of its own "
                "at the end of the echoed prompt. Use llm=hf or llm=vllm for log-likelihoods"
            )

    def _no_logprobs(self) -> str:
        return (
            "loglikelihood needs a completions endpoint that returns log-probs and echoes the prompt's "
            "(echo=true, logprobs); vLLM and the llama.cpp server offer it, chat-only APIs do not"
        )

    def embed(self, texts: list[str]) -> torch.Tensor:
        out = self._post("/embeddings", {"model": self.model, "input": list(texts)})
        rows = sorted(out["data"], key=lambda d: d.get("index", 0))
        return torch.nn.functional.normalize(
            torch.tensor([r["embedding"] for r in rows], dtype=torch.float), dim=-1
        )
