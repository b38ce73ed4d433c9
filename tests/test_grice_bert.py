"""GRICE with a BERT-style encoder: subword text pairs, multiple-choice scoring, checkpoints."""

from pathlib import Path

import pytest
import torch
from conftest import GRICE_FIXTURE

from pragexp.data.common.tokens import tokenization as tt
from pragexp.data.common.tokens.vocab import Vocabulary
from pragexp.data.grice import examples as ex
from pragexp.data.grice.io import read_dialogues
from pragexp.models.multiple_choice import ChoiceScorer
from pragexp.run import run


@pytest.fixture(scope="module")
def dialogues():
    return read_dialogues(GRICE_FIXTURE)


def tokenizer(dialogues, max_length=384):
    tok = tt.train_wordpiece(ex.dialogue_texts(dialogues), vocab_size=400)
    return tt.configure(tok, max_length, truncate_from="left")


def segment(tok, inputs, row, which):
    """The word pieces of one encoded pair's segment (0: dialogue, 1: candidate or question),
    without [CLS]/[SEP] and padding."""
    ids, types, mask = (inputs[k][row].tolist() for k in ("input_ids", "token_type_ids", "attention_mask"))
    kept = [i for i, t, m in zip(ids, types, mask, strict=True) if m and t == which]
    return [tok.id_to_token(i) for i in kept if tok.id_to_token(i) not in ("[CLS]", "[SEP]")]


def pieces(tok, text):
    return tok.encode(text, add_special_tokens=False).tokens


def test_recovery_pairs_hold_the_dialogue_so_far_and_each_candidate(dialogues):
    tok = tokenizer(dialogues)
    examples = ex.recovery_text_examples(dialogues)
    assert len(examples) == sum(len(d.rounds) for d in dialogues)
    first_dialogue = dialogues[0]
    third = examples[2]  # round 3 of the first dialogue: rounds 1-3 then a candidate
    assert len(third["pairs"]) == len(first_dialogue.rounds[2].options) == 4
    assert third["label"] == first_dialogue.rounds[2].answer_index
    inputs = ex.TextCollate(tok, choices=True)([third])["inputs"]
    flat = {k: v[0] for k, v in inputs.items()}  # (4 choices, L)
    assert segment(tok, flat, 1, 0) == pieces(tok, ex.dialogue_text(first_dialogue.rounds[:3]))
    assert segment(tok, flat, 1, 1) == pieces(tok, first_dialogue.rounds[2].options[1])


def test_long_dialogues_lose_their_oldest_rounds_not_the_round_asked_about(dialogues):
    tok = tokenizer(dialogues, max_length=32)
    last = ex.recovery_text_examples(dialogues[:1])[-1]
    inputs = ex.TextCollate(tok, choices=False)([{**last, "pairs": last["pairs"][:1]}])["inputs"]
    assert int(inputs["attention_mask"][0].sum()) == 32
    context = segment(tok, inputs, 0, 0)
    newest, oldest = dialogues[0].rounds[-1], dialogues[0].rounds[0]
    assert context[-len(pieces(tok, ex.round_text(newest))) :] == pieces(tok, ex.round_text(newest))
    assert context[: len(pieces(tok, ex.round_text(oldest)))] != pieces(tok, ex.round_text(oldest))


def test_qa_pairs_and_collated_shapes(dialogues):
    tok = tokenizer(dialogues)
    answers = Vocabulary(
        sorted({ex.answer_word(q.answer) for d in dialogues for q in d.questions}), specials=("<unk>",)
    )
    qa = ex.qa_text_examples(dialogues, answers)
    assert len(qa) == sum(len(d.questions) for d in dialogues)
    batch = ex.TextCollate(tok, choices=False)(qa[:3])
    assert batch["inputs"]["input_ids"].dim() == 2 and batch["inputs"]["input_ids"].shape[0] == 3
    recovery = ex.recovery_text_examples(dialogues)
    batch = ex.TextCollate(tok, choices=True)(recovery[:5])
    ids, mask = batch["inputs"]["input_ids"], batch["inputs"]["attention_mask"]
    assert ids.shape[:2] == (5, 4) and mask.shape == ids.shape
    alone = ex.TextCollate(tok, choices=True)([recovery[1]])["inputs"]["attention_mask"]
    assert mask[1, 2].sum() == alone[0, 2].sum()  # padding to the batch's longest is masked out
    assert (ids[mask == 0] == tt.pad_id(tok)).all()
    assert batch["group"].tolist() == [r["group"] for r in recovery[:5]]


class FirstTokenScorer(torch.nn.Module):
    """Scores a sequence by its second token id: the order of choices must survive the reshape."""

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        return input_ids[:, 1:2].float()


def test_choice_scorer_keeps_examples_and_choices_in_order():
    ids = torch.tensor([[[0, 5, 0], [0, 9, 1]], [[0, 7, 2], [0, 1, 3]]])
    logits = ChoiceScorer(FirstTokenScorer())(ids, torch.ones_like(ids), torch.zeros_like(ids))
    assert logits.tolist() == [[5.0, 9.0], [7.0, 1.0]]


@pytest.mark.slow
@pytest.mark.parametrize("task", ["grice_recovery", "grice_qa"])
def test_bert_checkpoint_evaluates_with_its_own_tokenizer(task, make_config):
    cfg = make_config([f"task={task}", "model=bert", "trainer.max_epochs=1"], out="train")
    trained = run(cfg)
    best = next(Path(cfg.paths.output_dir, "checkpoints").glob("best-*.ckpt"))
    checkpoint = torch.load(best, map_location="cpu", weights_only=True)
    assert checkpoint["GriceDataModule"]["tokenizer"]
    # model=lstm on the command line: the checkpoint's BERT and its tokenizer must win.
    evaluated = run(make_config([f"task={task}", "model=lstm", f"ckpt_path={best}"], name="eval", out="eval"))
    assert evaluated == pytest.approx({k: v for k, v in trained.items() if k.startswith("test/")}, abs=1e-6)


@pytest.mark.slow
def test_recovery_runs_offline_with_the_shipped_minilm_encoder(make_config):
    cfg = make_config(
        [
            "task=grice_recovery",
            "model=bert",
            "model.pretrained=minilm",
            "debug=fdr",
            "data.batch_size=4",
            "data.eval_batch_size=4",
        ]
    )
    metrics = run(cfg)
    assert 0.0 <= metrics["test/r@1"] <= metrics["test/mrr"] <= 1.0 and metrics["test/count"] == 4
