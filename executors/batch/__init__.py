"""Batch transcription (and indexing) of whole archives on Ray: ``run_batch(sources, BatchOptions)``.

Ray is an optional extra (``pip install 'ferrum-desktop[cluster]'``) and is imported only when a
batch runs, by ``cluster.py`` and ``pipeline.py``; importing this package does not import it.
"""

from .options import BatchOptions, BatchProgress, BatchSummary, FileOutcome
from .sources import BatchItem, plan_items


def run_batch(*args, **kwargs):
    from .pipeline import run_batch as run

    return run(*args, **kwargs)


__all__ = ["BatchItem", "BatchOptions", "BatchProgress", "BatchSummary", "FileOutcome", "plan_items", "run_batch"]
