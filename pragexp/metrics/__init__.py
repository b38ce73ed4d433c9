"""Metrics: torchmetrics Metric subclasses and plain functions."""

from pragexp.metrics.grouped import GroupedMeanMetric

__all__ = ["GroupedMeanMetric"]
