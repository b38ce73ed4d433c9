"""The GRICE model zoo: EntNet, RelNet, the generative (-Gen) head and MemNN w/ inf."""

from pathlib import Path

import pytest
import torch
from test_models import batch

from pragexp.data.common.tokens.vocab import Vocabulary
from pragexp.data.grice.datamodule import GriceDataModule
from pragexp.models.dialogue.entnet import EntNetReader
from pragexp.models.dialogue.heads import AnswerClassifier, CandidateRanker
from pragexp.models.dialogue.memnn import MemNNReader
from pragexp.models.dialogue.memnn_inf import MemNNInfReader, append_tokens
from pragexp.models.dialogue.relnet import RelNetReader
from pragexp.models.dialogue.seq2seq import (
    BOUNDARY_ID,
    Seq2SeqRanker,
    sequence_log_likelihood,
    with_boundaries,
)
from pragexp.run import run

SMALL = {"vocab_size": 30, "embed_dim": 8, "hidden_dim": 8, "fusion_dim": 16, "dropout": 0.0}


def tiny_gen(vocab_size=30):
    reader = MemNNReader(**{**SMALL, "vocab_size": vocab_size})
    return Seq2SeqRanker(reader, vocab_size=vocab_size, embed_dim=8, decoder_dim=16, dropout=0.0)


def tiny_inf():
    return MemNNInfReader(
        inference_model=lambda vocab_size: tiny_gen(vocab_size), max_explicit_len=5, **SMALL
    )


NEW_READERS = {
    "entnet": lambda: EntNetReader(slots=3, **SMALL),
    "relnet": lambda: RelNetReader(relation_dim=16, **SMALL),
    "memnn_inf": tiny_inf,
}


@pytest.mark.parametrize("name", list(NEW_READERS))
def test_new_readers_fit_both_heads_and_ignore_padding(name):
    torch.manual_seed(0)
    reader = NEW_READERS[name]().eval()
    history, query, candidates = batch()
    ranker = CandidateRanker(reader, hidden_dim=16).eval()
    scores = ranker(history, query, candidates)
    assert scores.shape == (3, 4) and torch.isfinite(scores).all()
    padded = torch.nn.functional.pad(history, (0, 3, 0, 1))  # an extra empty round, longer sentences
    assert torch.allclose(ranker(padded, query, candidates), scores, atol=1e-5)
    assert AnswerClassifier(reader, num_answers=7)(history, query).shape == (3, 7)
    other = history.clone()
    other[0, 0, 0] = 29 if history[0, 0, 0] != 29 else 28
    assert not torch.allclose(reader(history, query)[0], reader(other, query)[0]), "the history is ignored"


def test_boundaries_and_sequence_likelihood():
    tokens = torch.tensor([[5, 6, 0], [7, 0, 0]])
    assert with_boundaries(tokens).tolist() == [[2, 5, 6, 2, 0], [2, 7, 2, 0, 0]]
    assert Vocabulary.build(["a b"]).id(Vocabulary.SEP) == BOUNDARY_ID
    log_probs = torch.log(torch.full((2, 3, 4), 0.25))
    targets = torch.tensor([[1, 2, 3], [1, 0, 0]])
    assert torch.allclose(sequence_log_likelihood(log_probs, targets), torch.log(torch.tensor([0.25, 0.25])))
    assert torch.allclose(
        sequence_log_likelihood(log_probs, targets, normalise=False), torch.log(torch.tensor([0.25**3, 0.25]))
    )


def gold_preferring_scorer(gold: torch.Tensor, vocab_size: int, k: int):
    """A fixed decoder: at step t it puts almost all mass on the gold sequence's token t."""
    target = with_boundaries(gold)[:, 1:]  # (B, T): gold words then <eos>

    def scorer(encoded, inputs):
        n, steps = inputs.shape
        wanted = target.repeat_interleave(n // target.shape[0], dim=0)[:, :steps]
        logits = torch.full((n, steps, vocab_size), -10.0)
        logits.scatter_(-1, wanted.clamp(min=0).unsqueeze(-1), 10.0)
        return logits.log_softmax(-1)

    return scorer


def test_gen_ranking_gives_r_at_1_when_the_decoder_prefers_the_gold():
    from pragexp.generation.ranking import target_rank

    torch.manual_seed(0)
    history, query, candidates = batch(vocab=30)
    label = torch.tensor([2, 0, 3])
    candidates[1, 3] = candidates[1, 0]
    candidates[1, 3, 2:] = 0  # a prefix of the gold: must not win under length normalisation
    gold = candidates[torch.arange(3), label]
    model = tiny_gen().eval()
    model.token_log_probs = gold_preferring_scorer(gold, 30, 4)
    loss, logits = model.loss_and_logits(
        {"history": history, "query": query, "candidates": candidates, "label": label, "target": gold}
    )
    assert logits.shape == (3, 4) and loss.item() < 1e-3
    assert (target_rank(logits, label) == 1).all()
    # Training steps skip the candidates.
    assert (
        model.loss_and_logits(
            {"history": history, "query": query, "candidates": candidates, "label": label}, rank=False
        )[1]
        is None
    )


@pytest.mark.parametrize("beam_size", [1, 3])
def test_decoding_writes_the_preferred_sentence(beam_size):
    torch.manual_seed(0)
    history, query, candidates = batch(vocab=30)
    gold = candidates[:, 1]
    model = tiny_gen().eval()
    fixed = gold_preferring_scorer(gold, 30, 1)
    n = gold.shape[0]

    position = [0]

    def step(inputs, hidden, state, context, mask):  # the fixed scorer, one step at a time
        position[0] += 1
        return fixed(None, inputs.new_zeros((inputs.shape[0], position[0])))[:, -1:], hidden

    model.decoder.forward = step
    out = model.generate(history, query, max_len=10, beam_size=beam_size)
    assert out.shape[0] == n
    assert out.tolist() == gold[:, : out.shape[1]].tolist()
    # Free decoding with the real decoder runs too.
    del model.decoder.forward
    assert model.generate(history, query, max_len=4, beam_size=beam_size).shape[0] == n


def test_append_tokens_keeps_words_left_aligned():
    rounds = torch.tensor([[5, 6, 0], [7, 0, 0]])
    extra = torch.tensor([[8, 0], [9, 10]])
    assert append_tokens(rounds, extra).tolist() == [[5, 6, 2, 8, 0, 0], [7, 2, 9, 10, 0, 0]]


def test_recovery_and_qa_build_the_same_vocabulary(make_config):
    cfg = make_config(["task=grice_recovery"])
    modules = {}
    for question in ("recovery", "qa"):
        dm = GriceDataModule(
            question=question, generate=dict(cfg.data.generate), cache_dir=cfg.data.cache_dir
        )
        dm.prepare_data()
        dm.setup("fit")
        modules[question] = dm
    assert modules["recovery"].vocab.itos == modules["qa"].vocab.itos
    example = modules["recovery"].datasets["train"][0]
    assert example["target"] == example["candidates"][example["label"]]


@pytest.mark.slow
def test_memnn_inf_loads_a_generative_recovery_checkpoint(make_config):
    gen = make_config(["task=grice_recovery", "model=memnn_gen", "trainer.max_epochs=1"], out="gen")
    recovery = run(gen)
    assert 0.0 <= recovery["test/r@1"] <= 1.0 and "val/r@1" in recovery
    ckpt = next(Path(gen.paths.output_dir, "checkpoints").glob("best-*.ckpt"))
    cfg = make_config(
        ["task=grice_qa", "model=memnn_inf", f"model.inference_ckpt={ckpt}", "trainer.max_epochs=1"], out="qa"
    )
    metrics = run(cfg)
    assert "test/acc" in metrics
    # Frozen: the inference weights in the QA checkpoint are the recovery run's.
    source = torch.load(ckpt, weights_only=False)["state_dict"]
    qa_ckpt = next(Path(cfg.paths.output_dir, "checkpoints").glob("best-*.ckpt"))
    trained = torch.load(qa_ckpt, weights_only=False)["state_dict"]
    name = "decoder.embedding.weight"
    assert torch.equal(trained[f"net.reader.inference.{name}"], source[f"net.{name}"])
    # Other data -> another vocabulary: refused with a clear message.
    other = make_config(
        [
            "task=grice_qa",
            "model=memnn_inf",
            f"model.inference_ckpt={ckpt}",
            "debug=fdr",
            "data.generate.seed=7",
        ],
        out="other",
    )
    with pytest.raises(ValueError, match="same data"):
        run(other)


def test_memnn_inf_refuses_a_missing_or_discriminative_checkpoint(tmp_path):
    with pytest.raises(FileNotFoundError, match="model.inference_ckpt"):
        MemNNInfReader(vocab_size=30, inference_ckpt=str(tmp_path / "nope.ckpt"))
    bogus = tmp_path / "disc.ckpt"
    torch.save(
        {
            "pragexp": {
                "format": 2,
                "model": {"_target_": "pragexp.models.dialogue.memnn.MemNNReader", "_partial_": True},
            },
            "state_dict": {"net.reader.x": torch.zeros(1)},
        },
        bogus,
    )
    with pytest.raises(ValueError, match="memnn_gen"):
        MemNNInfReader(vocab_size=30, inference_ckpt=str(bogus))


@pytest.mark.slow
def test_grice_experiment_presets_compose(tmp_path):
    from conftest import CONF, compose_config

    presets = sorted((CONF / "experiment" / "grice").glob("table*.yaml"))
    assert len(presets) == 12  # Table 5: 6 rows; Table 6: 6 rows
    for preset in presets:
        cfg = compose_config([f"experiment=grice/{preset.stem}", "scale=small"], tmp_path)
        task, model = preset.stem.split("_", 1)
        assert cfg.hydra.runtime.choices.task == {"table5": "grice_recovery", "table6": "grice_qa"}[task]
        assert cfg.hydra.runtime.choices.model == model and model in cfg.supported_models
        # The paper's Adam at 1e-3 for every row but BERT, fine-tuned with the usual BERT recipe.
        assert cfg.optimizer.lr == (3e-5 if model == "bert" else 1e-3)
        assert (cfg.data.generate.train_dialogs, cfg.trainer.max_epochs) == (2000, 3)
    paper = compose_config(["experiment=grice/table5_memnn"], tmp_path)  # scale=paper by default
    assert (paper.data.generate.train_dialogs, paper.data.generate.val_dialogs, paper.trainer.max_epochs) == (
        6000,
        4000,
        40,
    )


def test_memnn_inf_cache_gives_the_same_reading():
    torch.manual_seed(0)
    cached = tiny_inf().eval()
    uncached = tiny_inf().eval()
    uncached.load_state_dict(cached.state_dict())
    uncached.cache_size = 0
    history, query, _ = batch()
    first = cached(history, query)
    assert len(cached._cache) == int(history.ne(0).any(-1).sum())
    assert torch.allclose(cached(history, query), first) and torch.allclose(
        uncached(history, query), first, atol=1e-6
    )
    cached.load_state_dict(cached.state_dict())
    assert not cached._cache, "loading weights must empty the cache"
