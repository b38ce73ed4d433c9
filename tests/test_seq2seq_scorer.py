"""Encoder-decoder LLMs (Flan-T5, Tk-Instruct: Hu et al.'s main open models) on the one LLM route: the scorer
(`generation.scoring.seq2seq_scorer`) equals a plain forward pass, under both pairings; a hub name or a folder
resolves to AutoModelForSeq2SeqLM; generation goes through `generate()`. A tiny random T5 with a T5-like
tokenizer (a "▁" prepended, `</s>` appended), both built here."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from pragexp.generation.backends.base import GenerationParams, Prompt, UnsupportedCall
from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.cache.cached_backend import CachedBackend
from pragexp.generation.scoring.requests import ChoiceRequest
from pragexp.generation.scoring.seq2seq_scorer import SCORING, score_seq2seq
from pragexp.pretrained import in_local_cache

CORPUS = [
    "Options: 1) yes 2) no 3) maybe 4) never 5) always. Answer: 1 2 3 4 5. The speaker means it is raining.",
    "Is the dress too long? It could sweep the floor. The speaker is being ironic, he wants to convey no.",
]
START = 0  # T5's decoder starts from its pad token


def t5_tokenizer():
    """T5's layout (pad 0, `</s>` 1, unk 2; a "▁" in front of each word; `</s>` after every text encoded with
    special tokens), byte-pair merges trained on two lines."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    raw.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.BpeTrainer(vocab_size=200, special_tokens=["<pad>", "</s>", "<unk>"])
    raw.train_from_iterator(CORPUS * 3, trainer)
    raw.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return PreTrainedTokenizerFast(
        tokenizer_object=raw, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )


def tiny_t5(seed: int = 0):
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = t5_tokenizer()
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        dropout_rate=0.0,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=START,
    )
    torch.manual_seed(seed)
    return T5ForConditionalGeneration(config).eval(), tokenizer


@pytest.fixture(scope="module")
def t5():
    return tiny_t5()


def plain(model, context_ids: list[int], option_ids: list[int]) -> float:
    """One forward pass, written out: the context to the encoder, start + option to the decoder, summed."""
    with torch.no_grad():
        logits = model(
            input_ids=torch.tensor([context_ids]), decoder_input_ids=torch.tensor([[START, *option_ids[:-1]]])
        ).logits
    logp = torch.log_softmax(logits[0].float(), -1)
    return sum(float(logp[j, t]) for j, t in enumerate(option_ids))


def requests() -> list[ChoiceRequest]:
    story = "Is the dress too long? It could sweep the floor. The speaker means:"
    return [
        ChoiceRequest(story + " ", ("it is raining", "no", "yes, always", "maybe never")),
        ChoiceRequest("Options: 1) yes 2) no\nAnswer:", ("yes", "no")),
        ChoiceRequest("The speaker is being ironic.\n", ("he wants to convey no", "yes")),
        ChoiceRequest(story, ("no", "maybe")),
    ]


def test_options_as_decoder_continuations_equal_a_plain_forward_pass(t5):
    model, tokenizer = t5
    reqs = requests()
    got = score_seq2seq(model, tokenizer, reqs)
    assert any(s.tokens > 1 for row in got for s in row) and any(s.tokens == 1 for row in got for s in row)
    for request, scores in zip(reqs, got, strict=True):
        context = request.context.rstrip()
        context_ids = tokenizer(context)["input_ids"]
        assert (
            context_ids[-1] == tokenizer.eos_token_id
        )  # the encoder reads the tokenizer's </s>, as lm-eval's
        for option, score in zip(request.options, scores, strict=True):
            text = request.context[len(context) :] + option  # the trailing whitespace moves to the option
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            assert score.tokens == len(ids) and score.bytes == len(text.encode())
            assert score.loglik == pytest.approx(plain(model, context_ids, ids), abs=1e-5)


def test_the_next_token_protocol_reads_the_decoders_first_step_as_hu_et_al(t5):
    """Hu et al.'s query_hf.py for Flan-T5: `generate(max_new_tokens=1, output_scores=True)` and each option
    number's logit at that first step; their argmax and softmax over the options are ours."""
    model, tokenizer = t5
    prompt = "Options: 1) yes 2) no 3) maybe 4) never\nAnswer: "
    [scores] = score_seq2seq(model, tokenizer, [ChoiceRequest(prompt, ("1", "2", "3", "4"), "next-token")])
    inputs = tokenizer(prompt, return_tensors="pt")  # trailing space kept, </s> appended
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=1, output_scores=True, return_dict_in_generate=True)
    option_ids = [tokenizer(o, add_special_tokens=False)["input_ids"] for o in "1234"]
    assert all(len(ids) == 1 for ids in option_ids)
    logp = torch.log_softmax(out.scores[0][0].float(), -1)
    for score, [token] in zip(scores, option_ids, strict=True):
        assert score.tokens == 1
        assert score.loglik == pytest.approx(float(logp[token]), abs=1e-5)
        assert score.loglik == pytest.approx(plain(model, inputs["input_ids"][0].tolist(), [token]), abs=1e-5)


def test_scores_do_not_depend_on_the_other_requests_of_a_call(t5):
    model, tokenizer = t5
    reqs = requests()
    alone = [score_seq2seq(model, tokenizer, [r])[0] for r in reqs]
    order = list(range(len(reqs)))
    random.Random(0).shuffle(order)
    together = score_seq2seq(model, tokenizer, [reqs[i] for i in order])
    for position, i in enumerate(order):
        assert together[position] == alone[i]  # bit for bit: each context is scored alone


@pytest.fixture(scope="module")
def folder(t5, tmp_path_factory):
    """The tiny T5 saved as a hub snapshot is laid out: `llm.model=<folder>` takes a hub name's route."""
    path = tmp_path_factory.mktemp("tiny-t5")
    model, tokenizer = t5
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_a_folder_resolves_to_an_encoder_decoder_and_the_backend_scores_and_generates(t5, folder, tmp_path):
    model, tokenizer = t5
    backend = HFBackend(model=str(folder), device="cpu", batch_size=2)
    loaded, _ = backend.load()
    assert type(loaded).__name__ == "T5ForConditionalGeneration" and not loaded.training
    assert backend.identity()["scoring"] == SCORING  # the cache key names the encoder-decoder recipe
    reqs = requests()
    assert backend.loglikelihood_many(reqs) == score_seq2seq(model, tokenizer, reqs)
    prompts = [Prompt("Is the dress too long?"), Prompt("Options: 1) yes 2) no\nAnswer:"), Prompt("Hi")]
    greedy = GenerationParams(max_new_tokens=4)
    replies = backend.generate_samples(prompts, greedy, 0)
    for prompt, reply in zip(prompts, replies, strict=True):  # a batch (padded) equals each prompt alone
        with torch.no_grad():
            out = model.generate(
                **tokenizer(prompt.text, return_tensors="pt"), max_new_tokens=4, do_sample=False
            )
        assert reply == tokenizer.decode(out[0], skip_special_tokens=True)
    sampled = GenerationParams(temperature=1.0, max_new_tokens=4, samples=2, seed=3)
    assert backend.generate(prompts, sampled) == backend.generate(prompts[::-1], sampled)[::-1]
    cached = CachedBackend(backend, tmp_path / "responses")
    first = cached.loglikelihood_many(reqs)
    calls = backend.calls
    assert cached.loglikelihood_many(reqs) == first and backend.calls == calls  # the second run: all cached


def test_what_an_encoder_decoder_backend_refuses(folder):
    backend = HFBackend(model=str(folder), device="cpu")
    with pytest.raises(ValueError, match="prefill"):
        backend.generate_samples([Prompt("Hi", templated=True, prefill="</think>")], GenerationParams(), 0)
    with pytest.raises(UnsupportedCall, match="encoder-decoder"):
        backend.embed(["a text"])
    with pytest.raises(UnsupportedCall, match="encoder-decoder"):
        HFBackend(model=str(folder), device="cpu", finetune="lora").trainable_model()


@pytest.mark.skipif(in_local_cache("google/flan-t5-xl"), reason="flan-t5-xl is in the local hub cache")
def test_a_hub_name_offline_is_refused_naming_the_model_and_the_offline_choice():
    backend = HFBackend(model="google/flan-t5-xl", device="cpu")
    assert backend.pretrained.source == "google/flan-t5-xl"
    with pytest.raises(OSError, match=r"'google/flan-t5-xl'.*llm\.model=smollm2"):
        backend.load()


@pytest.mark.slow
def test_hu_et_al_s_protocol_runs_on_an_encoder_decoder_as_their_query_hf_reads_flan_t5(
    t5, folder, make_config
):
    """`task=hu_pragmatics llm.model=<an encoder-decoder>`: each row's option probabilities are the softmax of
    the option numbers' logits at the decoder's first step, as the authors' `get_completion` computes them."""
    from pragexp.run import run

    model, tokenizer = t5
    cfg = make_config(["task=hu_pragmatics", "data.phenomena=[Irony]", f"llm.model={folder}"], name="eval")
    metrics = run(cfg)
    records = [json.loads(line) for line in open(f"{cfg.paths.output_dir}/predictions.jsonl")]
    assert len(records) == metrics["test/count"] > 0
    for record in records:
        assert record["pairing"] == "next-token"
        inputs = tokenizer(record["prompt"], return_tensors="pt")
        with torch.no_grad():
            out = model.generate(**inputs, max_new_tokens=1, output_scores=True, return_dict_in_generate=True)
        numbers = [tokenizer(c, add_special_tokens=False)["input_ids"][0] for c in record["continuations"]]
        theirs = torch.softmax(out.scores[0][0][numbers], 0).tolist()
        assert record["probs"] == pytest.approx(theirs, abs=1e-5)
        assert record["predicted"] == int(np.argmax(theirs))
