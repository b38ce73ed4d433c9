"""GRICE with a BERT-style encoder: subword text pairs, multiple-choice scoring, checkpoints."""

from pathlib import Path

import pytest
import torch
from conftest import SAMPLES

from pragexp.data.common import tokenization as tt
from pragexp.data.common.vocab import Vocabulary
from pragexp.data.grice import examples as ex
from pragexp.data.grice.io import read_dialogues
from pragexp.models.choice import ChoiceScorer
from pragexp.run import run

DIALOGUES = read_dialogues(SAMPLES / "grice" / "impl_dial_sample.json")


def tokenizer(max_length=384):
    tok = tt.train_wordpiece(ex.dialogue_texts(DIALOGUES), vocab_size=400)
    return tt.configure(tok, max_length, truncate_from="left")


def segment(tok, example_ids, example_types, which):
    """The word pieces of one segment (0: dialogue, 1: candidate or question), without [CLS]/[SEP]."""
    ids = [i for i, t in zip(example_ids.tolist(), example_types.tolist(), strict=True) if t == which]
    return [tok.id_to_token(i) for i in ids if tok.id_to_token(i) not in ("[CLS]", "[SEP]")]


def pieces(tok, text):
    return tok.encode(text, add_special_tokens=False).tokens


def test_recovery_pairs_hold_the_dialogue_so_far_and_each_candidate():
    tok = tokenizer()
    examples = ex.recovery_text_examples(DIALOGUES, tok)
    assert len(examples) == sum(len(d.rounds) for d in DIALOGUES)
    first_dialogue = DIALOGUES[0]
    third = examples[2]  # round 3 of the first dialogue: rounds 1-3 then a candidate
    assert len(third["input_ids"]) == len(first_dialogue.rounds[2].options) == 4
    assert third["label"] == first_dialogue.rounds[2].answer_index
    context = segment(tok, third["input_ids"][1], third["token_type_ids"][1], 0)
    candidate = segment(tok, third["input_ids"][1], third["token_type_ids"][1], 1)
    assert context == pieces(tok, ex.dialogue_text(first_dialogue.rounds[:3]))
    assert candidate == pieces(tok, first_dialogue.rounds[2].options[1])


def test_long_dialogues_lose_their_oldest_rounds_not_the_round_asked_about():
    tok = tokenizer(max_length=32)
    last = ex.recovery_text_examples(DIALOGUES[:1], tok)[-1]
    assert len(last["input_ids"][0]) == 32
    context = segment(tok, last["input_ids"][0], last["token_type_ids"][0], 0)
    newest, oldest = DIALOGUES[0].rounds[-1], DIALOGUES[0].rounds[0]
    assert context[-len(pieces(tok, ex.round_text(newest))) :] == pieces(tok, ex.round_text(newest))
    assert context[: len(pieces(tok, ex.round_text(oldest)))] != pieces(tok, ex.round_text(oldest))


def test_qa_pairs_and_collated_shapes():
    tok = tokenizer()
    answers = Vocabulary(
        sorted({ex.answer_word(q.answer) for d in DIALOGUES for q in d.questions}), specials=("<unk>",)
    )
    qa = ex.qa_text_examples(DIALOGUES, tok, answers)
    assert len(qa) == sum(len(d.questions) for d in DIALOGUES)
    batch = ex.TextCollate(tt.pad_id(tok), choices=False)(qa[:3])
    assert batch["inputs"]["input_ids"].dim() == 2 and batch["inputs"]["input_ids"].shape[0] == 3
    recovery = ex.recovery_text_examples(DIALOGUES, tok)
    batch = ex.TextCollate(tt.pad_id(tok), choices=True)(recovery[:5])
    ids, mask = batch["inputs"]["input_ids"], batch["inputs"]["attention_mask"]
    assert ids.shape[:2] == (5, 4) and mask.shape == ids.shape
    assert mask[1, 2].sum() == len(recovery[1]["input_ids"][2])  # padding is masked out
    assert batch["group"].tolist() == [r["group"] for r in recovery[:5]]


class FirstTokenScorer(torch.nn.Module):
    """Scores a sequence by its second token id: the order of choices must survive the reshape."""

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        return input_ids[:, 1:2].float()


def test_choice_scorer_keeps_examples_and_choices_in_order():
    ids = torch.tensor([[[0, 5, 0], [0, 9, 1]], [[0, 7, 2], [0, 1, 3]]])
    logits = ChoiceScorer(FirstTokenScorer())(ids, torch.ones_like(ids), torch.zeros_like(ids))
    assert logits.tolist() == [[5.0, 9.0], [7.0, 1.0]]


@pytest.mark.parametrize("task", ["grice_recovery", "grice_qa"])
def test_bert_checkpoint_evaluates_with_its_own_tokenizer(task, make_config):
    cfg = make_config([f"task={task}", "model=bert", "trainer.max_epochs=1"], out="train")
    trained = run(cfg)
    best = next(Path(cfg.paths.output_dir, "checkpoints").glob("best-*.ckpt"))
    checkpoint = torch.load(best, map_location="cpu", weights_only=False)
    assert checkpoint["GriceDataModule"]["tokenizer"]
    # model=lstm on the command line: the checkpoint's BERT and its tokenizer must win.
    evaluated = run(make_config([f"task={task}", "model=lstm", f"ckpt_path={best}"], name="eval", out="eval"))
    assert evaluated == pytest.approx({k: v for k, v in trained.items() if k.startswith("test/")}, abs=1e-6)


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
