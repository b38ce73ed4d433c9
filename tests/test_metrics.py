import torch

from pragexp.metrics import GroupedMeanMetric, reciprocal_rank, target_rank


def test_rank_counts_ties_against_the_gold():
    scores = torch.tensor([[0.1, 0.9, 0.3, 0.2], [1.0, 1.0, 1.0, 1.0], [0.5, 0.1, 0.2, 0.3]])
    target = torch.tensor([1, 0, 3])
    assert target_rank(scores, target).tolist() == [1, 4, 2]
    assert torch.allclose(reciprocal_rank(scores, target), torch.tensor([1.0, 0.25, 0.5]))


def test_grouped_mean_counts_each_index_once_and_splits_groups():
    metric = GroupedMeanMetric(["acc"], ["explicit", "relevance"])
    metric.update(torch.tensor([0, 1, 2]), torch.tensor([0, 1, 1]), acc=torch.tensor([1.0, 0.0, 1.0]))
    # A distributed sampler pads by repeating examples: index 0 comes back, it must not count twice.
    metric.update(torch.tensor([3, 0]), torch.tensor([-1, 0]), acc=torch.tensor([0.0, 1.0]))
    out = metric.compute()
    assert out["count"] == 4
    assert torch.isclose(out["acc"], torch.tensor(0.5))
    assert out["acc/explicit"] == 1.0 and out["acc/relevance"] == 0.5
    metric.reset()
    assert metric.compute() == {}
