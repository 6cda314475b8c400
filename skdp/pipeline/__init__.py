"""Pipelines whose private steps are paid for together, before any step is fitted."""

from ._pipeline import DPPipeline, make_pipeline

__all__ = ["DPPipeline", "make_pipeline"]
