import pytest
import torch

from pragexp.models.dialogue.heads import AnswerClassifier, CandidateRanker
from pragexp.models.dialogue.layers import SentenceEncoder
from pragexp.models.dialogue.lstm import LSTMReader, flatten_rounds
from pragexp.models.dialogue.memnn import MemNNReader

READERS = [LSTMReader, MemNNReader]


def batch(seed=0, b=3, r=4, length=6, vocab=30):
    g = torch.Generator().manual_seed(seed)
    history = torch.randint(3, vocab, (b, r, length), generator=g)
    history[0, 2:] = 0  # first dialogue has two rounds
    history[1] = 0  # second has none (the dialogue's first round)
    history[:, :, -2:] = 0
    query = torch.randint(3, vocab, (b, length), generator=g)
    candidates = torch.randint(3, vocab, (b, 4, length), generator=g)
    return history, query, candidates


def test_flatten_rounds_keeps_token_order():
    history = torch.tensor([[[5, 6, 0], [7, 0, 0]]])
    assert flatten_rounds(history).tolist() == [[5, 6, 7, 0, 0, 0]]


@pytest.mark.parametrize("bidirectional", [True, False])
def test_sentence_encoder_reads_each_sentence_as_if_alone(bidirectional):
    """Padded rows give what the LSTM gives on each sentence by itself: token states, zero at padding, and
    the final states of both directions (the right-to-left one ends on the first word)."""
    torch.manual_seed(0)
    encoder = SentenceEncoder(torch.nn.Embedding(30, 8, padding_idx=0), 6, bidirectional=bidirectional).eval()
    tokens = torch.tensor([[4, 5, 6, 7, 0, 0], [8, 9, 0, 0, 0, 0], [0] * 6, [10, 11, 12, 13, 14, 15]])
    vectors, states = encoder.encode(tokens.view(2, 2, 6))
    vectors, states = vectors.view(4, -1), states.view(4, 6, -1)
    for row, sentence in enumerate(tokens):
        words = sentence[sentence.ne(0)]
        if not len(words):
            assert not vectors[row].any() and not states[row].any()
            continue
        alone, (hidden, _) = encoder.lstm(encoder.embedding(words)[None])
        assert torch.allclose(states[row, : len(words)], alone[0], atol=1e-6)
        assert not states[row, len(words) :].any()
        assert torch.allclose(vectors[row], torch.cat(list(hidden[:, 0])), atol=1e-6)


@pytest.mark.parametrize("reader_cls", READERS)
def test_heads_shapes_and_padding_invariance(reader_cls):
    torch.manual_seed(0)
    reader = reader_cls(vocab_size=30, embed_dim=8, hidden_dim=8, fusion_dim=16, dropout=0.0).eval()
    ranker = CandidateRanker(reader, hidden_dim=16).eval()
    history, query, candidates = batch()
    scores = ranker(history, query, candidates)
    assert scores.shape == (3, 4) and torch.isfinite(scores).all()
    # More padding (an extra empty round, longer sentences) must not change anything.
    padded = torch.nn.functional.pad(history, (0, 3, 0, 1))
    assert torch.allclose(ranker(padded, query, candidates), scores, atol=1e-5)
    classifier = AnswerClassifier(reader, num_answers=7).eval()
    assert classifier(history, query).shape == (3, 7)


@pytest.mark.parametrize("reader_cls", READERS)
def test_reader_uses_the_history(reader_cls):
    torch.manual_seed(0)
    reader = reader_cls(vocab_size=30, embed_dim=8, hidden_dim=8, fusion_dim=16, dropout=0.0).eval()
    history, query, _ = batch()
    other = history.clone()
    other[0, 0, 0] = 29 if history[0, 0, 0] != 29 else 28
    assert not torch.allclose(reader(history, query)[0], reader(other, query)[0])
