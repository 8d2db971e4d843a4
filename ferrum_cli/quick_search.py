"""``ferrum search`` without torch: the query embedded by the ONNX copy of the embedding model
(``executors.bert.onnx_model``), the index searched with numpy (``executors.search.query_store``).

Importing torch and transformers and loading the model were about 5 s of a 6.5 s search; this path
loads neither and ranks with the engine service's own code (``executors.search.search_index``), so
the hits are the same. It serves searches on the CPU (``--device auto`` or ``cpu``) once the model's
ONNX copy exists. ``ferrum index`` makes the copy after indexing; a search that finds none runs through
the engine service and makes it afterwards.
"""

from __future__ import annotations

FAST_DEVICES = ("auto", "cpu")


def quick_hits(args) -> list | None:
    """The hits of ``ferrum search``'s arguments, or None when this path cannot serve them (another
    device, or no ONNX copy of the model yet)."""
    if args.device not in FAST_DEVICES:
        return None
    from executors.bert.onnx_model import OnnxModelMissing
    from executors.loading import load_query_embedder
    from executors.models.store import DEFAULT_EMBEDDING
    from executors.search import search_index
    from executors.search.query_store import QueryStore

    from .engine import threads_of

    threads = threads_of(args)
    store = QueryStore(args.db)
    try:
        known = {c.name: c.model_id for c in store.collections()}
        model = args.model or known.get(args.collection) or DEFAULT_EMBEDDING  # else the collection's own
        try:
            embedder = load_query_embedder(model, threads)
        except OnnxModelMissing:
            return None
        collections = None if args.collection is None else [args.collection]
        return search_index(store, embedder, args.query, collections, k=args.k, hybrid=args.hybrid)
    finally:
        store.close()


def prepare_quick_search(args, model_ref: str) -> str | None:
    """Make the ONNX copy of ``model_ref`` (after torch has served ``ferrum index`` or ``search``) so that
    later searches take the quick path; what was done, in words, or None when nothing was (the copy
    exists, or the command runs on another device)."""
    if args.device not in FAST_DEVICES:
        return None
    from executors.bert.onnx_export import export_onnx
    from executors.core.errors import FerrumError

    try:
        report = export_onnx(model_ref, args.threads)
    except FerrumError as exc:
        return f"searches go on through torch: the ONNX copy of the model failed: {exc}"
    if not report.seconds:
        return None
    return (f"made an ONNX copy of {report.files.model_id} in {report.seconds:.1f} s ({report.files.folder}): "
            "searches load neither torch nor transformers now")
