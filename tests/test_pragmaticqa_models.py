"""The readers: Fusion-in-Decoder (tiny random BART) fuses K passages, decodes greedily or with beams, and
gives the same gradients with checkpointing; the lead baseline's sentences."""

import torch

from pragexp.models.fid import FiDReader, LeadReader, OracleReader, sentences
from pragexp.pretrained.seq2seq import _set_special_ids

SPECIAL = {"pad": 0, "bos": 1, "eos": 2, "decoder_start": 2}


def reader(**kwargs) -> FiDReader:
    torch.manual_seed(0)
    return FiDReader(50, SPECIAL, pretrained="tiny", **kwargs)


def inputs(batch=2, k=3, length=6):
    torch.manual_seed(1)
    ids = torch.randint(3, 50, (batch, k, length))
    mask = torch.ones_like(ids)
    mask[:, -1, 4:] = 0  # the last passage is shorter
    return ids, mask


def test_the_decoder_reads_all_passages_at_once():
    fid = reader().eval()
    ids, mask = inputs()
    states, fused = fid.encode(ids, mask)
    assert states.shape[:2] == (2, 3 * 6) and fused.shape == (2, 18)
    labels = torch.randint(3, 50, (2, 4))
    logits = fid(ids, mask, labels)
    assert logits.shape == (2, 4, 50)
    changed = ids.clone()
    changed[:, 2, :4] = 7  # another third passage changes the output distribution
    assert not torch.allclose(logits, fid(changed, mask, labels))


def test_greedy_and_beam_search():
    fid = reader().eval()
    ids, mask = inputs()
    greedy = fid.generate(ids, mask, max_new_tokens=5, num_beams=1)
    beams = fid.generate(ids, mask, max_new_tokens=5, num_beams=3)
    assert greedy.shape[0] == beams.shape[0] == 2 and greedy.shape[1] <= 6
    assert (greedy[:, 0] == SPECIAL["decoder_start"]).all()


def test_decoding_drops_the_constraints_a_hub_config_brings():
    fid = reader()
    generation = fid.generator.generation_config
    # as facebook/bart-large's config asks: no repeated trigram, at least 5 tokens, a forced <s>
    generation.no_repeat_ngram_size, generation.min_length, generation.forced_bos_token_id = 3, 5, 1
    _set_special_ids(fid.generator, SPECIAL)
    assert (generation.no_repeat_ngram_size, generation.min_length, generation.forced_bos_token_id) == (
        0,
        0,
        None,
    )


def test_gradient_checkpointing_gives_the_same_gradients():
    ids, mask = inputs()
    labels = torch.randint(3, 50, (2, 4))
    grads = []
    for checkpointing in (False, True):
        fid = reader(gradient_checkpointing=checkpointing).train()
        torch.manual_seed(2)  # the same dropout masks
        loss = torch.nn.functional.cross_entropy(fid(ids, mask, labels).transpose(1, 2), labels)
        loss.backward()
        grads.append(torch.cat([p.grad.flatten() for p in fid.parameters() if p.grad is not None]))
    assert torch.allclose(grads[0], grads[1], atol=1e-5)


def test_baselines():
    golds = [(("Age 46",), ("born 1971",), "He is 46.")]
    assert OracleReader().predict(golds, [[]]) == golds
    passage = [("Title", "First one here. Second one!  Third?")]
    assert sentences(passage[0][1]) == ["First one here.", "Second one!", "Third?"]
    assert LeadReader().predict(golds, [passage, []]) == [
        (("First one here.",), ("Second one!",), "First one here. Second one!"),
        ((), (), ""),
    ]
