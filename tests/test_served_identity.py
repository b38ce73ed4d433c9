"""The response cache names a server by the model it serves, not by its address (issue 49.2,
pragexp/generation/ served.py): the same model behind another port answers from the cache; another model under
the same name, or the same name on another path (vLLM's `root`), does not; a server without log-probabilities
is named by its address; rounding noise between two servers of one model is tolerated."""

from __future__ import annotations

import json

import pytest
from openai_server import Script, openai_server

from pragexp.generation.backends import served
from pragexp.generation.backends.openai import OpenAIBackend
from pragexp.run import run


def identities(scripts: list[Script], folder, model: str = "m") -> list[dict]:
    """The identity of a backend on each server, one after the other, sharing one fingerprint folder."""
    out = []
    for script in scripts:
        with openai_server(script) as url:
            out.append(
                OpenAIBackend(
                    model=model, base_url=url, api_key_env=None, fingerprints=str(folder)
                ).identity()
            )
    return out


def test_the_same_model_on_two_ports_is_one_identity_and_another_model_is_not(tmp_path):
    first, second, other = identities([Script(), Script(), Script(weights=1)], tmp_path)
    assert first == second and "address" not in first and first["weights"]
    assert other != first and other["weights"] != first["weights"]  # another model under the same name


@pytest.mark.slow
def test_rounding_noise_between_servers_of_one_model_is_the_same_model(tmp_path):
    """Each server moves every log-prob by up to 0.02 (as another batch shape rounds otherwise): one model."""
    noisy = [Script(jitter=0.02, salt=salt) for salt in range(4)]
    names = {i["weights"] for i in identities(noisy, tmp_path)}
    assert len(names) == 1
    assert len(list(tmp_path.rglob("*.json"))) == 1  # one fingerprint kept; the others matched it
    # a model whose log-probs differ by about a tenth of a nat per token is another model
    shifted = Script(jitter=0.02, salt=9)
    shifted.dist = lambda previous, base=shifted.dist: {c: v - 0.15 for c, v in base(previous).items()}
    assert identities([shifted], tmp_path)[0]["weights"] not in names


def test_what_the_server_says_of_the_model_is_part_of_its_name(tmp_path):
    """vLLM's /v1/models names the weights' path (`root`) and a LoRA adapter's base (`parent`); `created` (the
    time of the request) and `max_model_len` change no answer."""
    a, b, c = Script(), Script(), Script()
    a.models = [{"id": "m", "root": "/models/llama", "created": 1, "max_model_len": 4096}]
    b.models = [{"id": "m", "root": "/models/llama", "created": 2, "max_model_len": 8192}]
    c.models = [{"id": "m", "root": "/models/llama", "parent": "/models/base", "created": 3}]
    first, second, adapter = identities([a, b, c], tmp_path)
    assert first == second and first["served"] == {"root": "/models/llama"}
    assert adapter != first and adapter["served"]["parent"] == "/models/base"


def test_a_server_without_log_probabilities_is_named_by_its_address(tmp_path):
    chat_only = Script()
    chat_only.logprobs = False
    with openai_server(chat_only) as url:
        backend = OpenAIBackend(model="m", base_url=url, api_key_env=None, fingerprints=str(tmp_path))
        assert backend.identity()["address"] == url
        assert backend.calls == 0  # asking what it serves is no model call


def test_a_damaged_fingerprint_file_is_skipped_and_named(tmp_path, caplog):
    (first,) = identities([Script()], tmp_path)
    (kept,) = list(tmp_path.rglob("*.json"))
    kept.write_text('{"tokens": ["T", "h"')  # torn
    (again,) = identities([Script()], tmp_path)
    assert again["weights"] == first["weights"]  # the exact probe's own name, written anew
    assert str(kept) in caplog.text and json.loads(kept.read_text())["tokens"]


def test_same_model_compares_tokens_and_both_tolerances():
    tokens, values = ["a", "b", "c"], [-1.0, -2.0, -3.0]
    assert served.same_model(tokens, values, tokens, [v + 0.04 for v in values])
    assert not served.same_model(tokens, values, tokens, [v + 0.06 for v in values])  # mean
    assert not served.same_model(tokens, values, tokens, [-1.0, -2.0, -3.0 + 0.6])  # one token far off
    assert not served.same_model(tokens, values, ["a", "b", "d"], values)  # another tokenizer


@pytest.mark.slow
def test_an_evaluation_against_another_port_of_the_same_model_asks_it_nothing(make_config, tmp_path):
    """LUDWIG scored through server A, then through server B (another port, the same model): B is asked only
    what it serves, every score comes from the cache; then server C (another model, the same name) is asked
    every score again."""
    asked = {}
    metrics = {}
    for name, script in (("a", Script()), ("b", Script()), ("c", Script(weights=1))):
        with openai_server(script) as url:
            overrides = [
                "task=ludwig",
                "llm=openai",
                "llm.model=m",
                f"llm.base_url={url}",
                "llm.chat=false",
                "llm.api_key_env=null",
            ]
            metrics[name] = run(make_config(overrides, name="eval", out=name))
        asked[name] = [r[2].get("prompt") for r in script.requests if r[0].endswith("/completions")]
    assert len(asked["a"]) > 10 and all(p != served.PROBE for p in asked["a"][1:])
    assert asked["b"] == [served.PROBE]  # the probe, then nothing: 0 answers missing from the cache
    assert metrics["b"]["test/acc"] == metrics["a"]["test/acc"]
    assert len(asked["c"]) == len(asked["a"])  # another model under the same name: asked everything


def test_two_fingerprints_of_one_model_written_at_once_name_it_alike(tmp_path):
    """Two jobs that met a new model at once left a file each: every later job takes the first."""
    book, name = served.Fingerprints(tmp_path), {"model": "m", "revision": None, "served": {}}
    tokens = ["The", " committee"]
    first = book.match(name, tokens, [-1.0, -2.0])
    (written,) = list(tmp_path.rglob("*.json"))
    (written.parent / "0000.json").write_text(json.dumps({"tokens": tokens, "values": [-1.01, -2.0]}))
    assert first != "0000" and book.match(name, tokens, [-1.0, -2.0]) == "0000"
    assert book.match(name, tokens, [-1.5, -2.5]) not in (first, "0000")  # another model: its own
