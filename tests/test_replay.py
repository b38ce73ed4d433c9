"""Replay (issue 53.4, pragexp/generation/cache/replay.py): a run whose answers are all in the response cache
completes with its server gone (`llm.replay=true`, or by itself when the server cannot be reached) under the
identity recorded with the answers; a missing answer stops it naming the first request and how many; an
in-process model's replay loads no weights; which recorded identity a replay takes is never a guess."""

from __future__ import annotations

import json
import re

import pytest
from openai_server import Script, openai_server
from replay_runs import ludwig_overrides, ludwig_run, run_at

from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.backends.openai import APIError
from pragexp.generation.cache.answers import ANSWERS
from pragexp.generation.cache.identities import IdentityBook, Recorded, ReplayError, choose, digest
from pragexp.generation.cache.replay import MissingAnswers


@pytest.mark.slow
def test_a_run_replays_with_its_server_gone(tmp_path, caplog):
    cache = tmp_path / "cache"
    with openai_server(Script()) as url:
        served = run_at(tmp_path / "served", ludwig_overrides(url, cache))
    record = json.loads((tmp_path / "served" / ANSWERS).read_text())
    (used,) = record["caches"]
    assert used["identity"]["weights"] and used["address"] == url and len(used["keys"]) > 10
    assert used["digest"] == digest(used["identity"])
    # the server is gone: asked for, the cache alone; by itself (the probe fails), the same
    replayed = run_at(tmp_path / "replayed", ludwig_overrides(url, cache, "llm.replay=true"))
    auto = run_at(tmp_path / "auto", ludwig_overrides(url, cache))
    assert replayed == served and auto == served  # key for key
    assert f"{url} cannot be reached" in caplog.text and used["digest"] in caplog.text
    assert json.loads((tmp_path / "auto" / ANSWERS).read_text())["caches"][0]["keys"] == used["keys"]
    with pytest.raises(APIError, match="gave up after 1 attempts"):  # false: never replay
        run_at(tmp_path / "never", ludwig_overrides(url, cache, "llm.replay=false"))
    # a run folder names the identity it recorded
    again = run_at(tmp_path / "again", ludwig_overrides(url, cache, f"llm.replay={tmp_path / 'served'}"))
    assert again == served


@pytest.mark.slow
def test_a_missing_answer_names_the_first_request_and_how_many(tmp_path):
    cache = tmp_path / "cache"
    with openai_server(Script()) as url:
        run_at(tmp_path / "served", ludwig_overrides(url, cache, "prompt.template=0"))
    with pytest.raises(MissingAnswers) as caught:  # another template: other prompts, none of them cached
        run_at(tmp_path / "other", ludwig_overrides(url, cache, "prompt.template=1", "llm.replay=true"))
    message = str(caught.value)
    assert message.startswith("task=ludwig: replay (llm.replay=true")
    assert "loglikelihood of the options after '" in message
    count, asked = re.search(r"(\d+) of the (\d+) answers of this call", message).groups()
    assert int(count) == int(asked) > 0  # every answer of the first call is missing
    assert str(cache / "llm" / "responses") in message and "unpack" in message


@pytest.mark.slow
def test_a_server_gone_with_nothing_recorded_keeps_its_error(tmp_path):
    with openai_server(Script()) as url:
        pass  # the port is closed now
    with pytest.raises(APIError, match="gave up after 1 attempts"):
        run_at(tmp_path / "run", ludwig_overrides(url, tmp_path / "cache"))
    with pytest.raises(ReplayError, match="no identity recorded for"):
        run_at(tmp_path / "asked", ludwig_overrides(url, tmp_path / "cache", "llm.replay=true"))


@pytest.mark.slow
def test_an_in_process_model_replays_without_its_weights(tmp_path, monkeypatch):
    """llm=hf (the tiny model): the replay never loads the weights nor computes the identity (the recorded one
    keys it); only the tokenizer renders the prompts."""
    overrides = [*ludwig_run(tmp_path / "cache"), "llm=tiny"]
    first = run_at(tmp_path / "first", overrides)

    def poisoned(*args, **kwargs):
        raise AssertionError("a replay loaded the model or computed its identity")

    monkeypatch.setattr(HFBackend, "load", poisoned)
    monkeypatch.setattr(HFBackend, "identity", poisoned)
    assert run_at(tmp_path / "replayed", [*overrides, "llm.replay=true"]) == first
    with pytest.raises(AssertionError, match="a replay loaded"):  # the poison works: without replay, it bites
        run_at(tmp_path / "plain", overrides)


@pytest.mark.slow
def test_answers_scored_under_another_shape_table_replay_under_that_table_only(tmp_path):
    """Answers cached on a CPU before issue 55 (v4's table: `llm.pass_shapes={tokens: 128, bucket: 8}`)
    replay with that table set; under the CPU's default table (its scores round otherwise) a replay stops,
    naming the setting."""
    v4 = "llm.pass_shapes={tokens:128,bucket:8}"
    overrides = [*ludwig_run(tmp_path / "cache"), "llm=tiny"]
    first = run_at(tmp_path / "first", [*overrides, v4])
    assert run_at(tmp_path / "replayed", [*overrides, v4, "llm.replay=true"]) == first
    with pytest.raises(ReplayError, match=r"pass_shapes=128t/8b/4096r/16o/8l/pow2"):
        run_at(tmp_path / "default", [*overrides, "llm.replay=true"])


def test_which_recorded_identity_a_replay_takes(tmp_path, caplog):
    book = IdentityBook(tmp_path)
    name = {"backend": "openai", "model": "m"}
    a = Recorded({"model": "m", "weights": "A"}, name, "http://a/v1")
    b = Recorded({"model": "m", "weights": "B"}, name, "http://b/v1")
    book.record(a)
    book.record(b)
    assert book.choose(name, "http://a/v1") == a and book.choose(name, "http://b/v1") == b
    with pytest.raises(
        ReplayError, match="no identity recorded for backend=openai, model=m at http://x/v1"
    ) as no:
        book.choose(name, "http://x/v1")  # never another address's answers unasked: both named instead
    assert (
        a.digest in str(no.value)
        and b.digest in str(no.value)
        and "llm.replay=<a run folder" in str(no.value)
    )
    # a run's own record names its identity at any address; two there: refused, both listed
    assert choose([b], name, "http://x/v1", None, False, "run") == b
    with pytest.raises(ReplayError, match="run: 2 identities recorded for backend=openai, model=m: "):
        choose([a, b], name, "http://x/v1", None, False, "run")
    # two at one address (an in-process model's files changed): the one it computes itself
    local = {"backend": "hf", "model": "x"}
    for files in ("old", "new"):
        book.record(Recorded({**local, "files": files}, local))
    assert book.choose(local, None, local=lambda: {**local, "files": "new"}).identity["files"] == "new"
    with pytest.raises(ReplayError, match="2 identities recorded for backend=hf, model=x: .*run folder"):
        book.choose(local, None)
    with pytest.raises(ReplayError, match="recorded for that model"):
        book.choose({**name, "chat": True}, "http://a/v1")  # other settings: another identity
    damaged = next(tmp_path.glob(f"{a.digest}-*.json"))
    damaged.write_text(damaged.read_text().replace('"A"', '"Z"'))  # its identity no longer its digest
    assert a.digest not in [r.digest for r in book.all()] and str(damaged) in caplog.text
