"""Metrics: torchmetrics Metric subclasses and plain functions."""

from pragexp.metrics.grouped import GroupedMeanMetric
from pragexp.metrics.ranking import reciprocal_rank, target_rank

__all__ = ["GroupedMeanMetric", "reciprocal_rank", "target_rank"]
