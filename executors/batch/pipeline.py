"""``run_batch``: transcribe (and index) many files on Ray, resumably.

    list -> decode (CPU tasks beside GPU workers; CPU workers decode their own) -> transcribe (actor
         pool of Whisper executors)
         -> [chunk + embed (actor pool of BERT executors)] -> driver: write each output, store rows

The driver plans the work (files whose output exists are skipped), writes every output file
atomically as its row arrives, keeps the search store (one SQLite writer), reports progress
from the rows it has seen, and writes a summary beside the outputs. Workers never write files,
so the output folder and the search database only need to be reachable from the driver.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ..core.errors import Cancelled, FerrumError, wrap_unexpected
from ..core.types import CancelToken
from .cluster import ray_cluster
from .diarize import speaker_labeller
from .index_sink import IndexSink
from .options import BatchOptions, BatchProgress, BatchSummary, FileOutcome
from .resources import DECODE_CPUS, EMBED_CPUS, Resources, plan_resources
from .sources import SUMMARY_NAME, BatchItem, plan_items
from .steps import with_batch_windows, write_output
from .workers import Embedder, Transcriber, decode_row, new_row

EMBED_BATCH = 1         # a transcript is already many chunks; larger batches would hold rows back


def _pending(items: list[BatchItem], options: BatchOptions, sink: IndexSink | None,
             summary: BatchSummary) -> list[dict]:
    """Rows for the files still to do; an existing output only goes in to be indexed if needed."""
    rows = []
    for item in items:
        if item.output.is_file() and not options.overwrite:
            summary.skipped += 1
            if sink is not None:
                text = item.output.read_text(encoding="utf-8")
                if sink.needs(item.output, text):
                    rows.append(new_row(item.index, str(item.source), str(item.output), text=text))
            continue
        rows.append(new_row(item.index, str(item.source), str(item.output)))
    return rows


class _Durations:
    """Audio length of the files to transcribe, probed in the background for the ETA."""

    def __init__(self, sources: Iterable[str]):
        self.total = 0.0
        self._sources = list(sources)
        self._thread = threading.Thread(target=self._probe, name="ferrum-batch-probe", daemon=True)
        self._thread.start()

    def _probe(self) -> None:
        from ..audio.decode import audio_duration

        total = 0.0
        for source in self._sources:
            try:
                total += audio_duration(source)
            except Exception:  # noqa: BLE001 - a bad file is reported by the pipeline, not here
                pass
        self.total = total


def _build(ray, rows: list[dict], options: BatchOptions, res: Resources, postprocess):
    from ray.data import ActorPoolStrategy, TaskPoolStrategy

    ds = ray.data.from_items(rows, override_num_blocks=len(rows))
    to_transcribe = sum(1 for r in rows if not r["text"])
    if to_transcribe:  # else every row only needs indexing: no Whisper workers
        if res.decoders:
            decoders = TaskPoolStrategy(size=min(res.decoders, to_transcribe))
            ds = ds.map(decode_row, num_cpus=DECODE_CPUS, compute=decoders)
        transcribe = with_batch_windows(options.transcribe, options.batch_size)
        ds = ds.map_batches(
            Transcriber, batch_size=options.batch_size, compute=ActorPoolStrategy(size=res.workers),
            fn_constructor_kwargs={"model": options.model, "device": res.device, "threads": res.threads,
                                   "options": transcribe, "fmt": options.fmt, "postprocess": postprocess},
            num_cpus=res.worker_cpus, num_gpus=res.worker_gpus or None)
    if options.index:
        ds = ds.map_batches(
            Embedder, batch_size=EMBED_BATCH, compute=ActorPoolStrategy(size=1),
            fn_constructor_kwargs={"model": options.embedding_model, "device": "cpu", "threads": 1},
            num_cpus=EMBED_CPUS)
    return ds


class _Drain:
    """Consumes result rows on the driver: files, index rows, summary and progress."""

    def __init__(self, rows: list[dict], sink: IndexSink | None, summary: BatchSummary,
                 on_progress: Callable[[BatchProgress], None] | None, durations: _Durations):
        self.index_only = {r["index"] for r in rows if r["text"]}
        self.waiting = {r["index"]: r for r in rows}
        self.sink, self.summary, self.on_progress, self.durations = sink, summary, on_progress, durations
        self.started = time.perf_counter()
        self.done = self.failed = 0
        self.audio_done = 0.0
        self.first = (0.0, 0.0)
        self.total = len(rows)

    def progress(self, last: FileOutcome | None = None) -> None:
        elapsed = time.perf_counter() - self.started
        if self.done == 1:
            self.first = (elapsed, self.audio_done)
        if self.on_progress is not None:
            self.on_progress(BatchProgress(self.done, self.total, self.failed, self.audio_done,
                                           self.durations.total, elapsed, last, *self.first))

    def take(self, row: dict) -> None:
        self.waiting.pop(row["index"], None)
        outcome = FileOutcome(row["source"], row["output"], "written", float(row["duration"]), float(row["seconds"]),
                              int(row["worker"]), row["error"], row["index_error"])
        if row["index"] in self.index_only:
            outcome.status = "indexed"
        elif not outcome.error:
            try:
                write_output(Path(row["output"]), row["text"])
                self.summary.written += 1
                self.summary.audio_seconds += outcome.duration_s
            except FerrumError as exc:
                outcome.error = str(exc)
        if outcome.error:
            outcome.status = "failed"
            self.failed += 1
            self.summary.failed.append({"source": outcome.source, "error": outcome.error})
        elif self.sink is not None:
            self._index(row, outcome)
        self.done += 1
        self.audio_done += outcome.duration_s
        self.progress(outcome)

    def _index(self, row: dict, outcome: FileOutcome) -> None:
        error = row["index_error"]
        if not error:
            try:
                self.sink.put(row["source"], row["output"], row["text"], row["chunks"], row["vectors"])
                self.summary.indexed += 1
                return
            except FerrumError as exc:
                error = str(exc)
        outcome.index_error = error
        self.summary.index_failed.append({"source": row["source"], "output": row["output"], "error": error})

    def lost(self) -> None:
        """Files whose rows never came back (a stage failed in Ray itself; its logs say why)."""
        for row in self.waiting.values():
            self.summary.failed.append({"source": row["source"], "error": (
                "no result came back from Ray for this file; the Ray session logs "
                "(/tmp/ray/session_latest/logs on the nodes) say why")})


def _ray_error(exc: BaseException) -> FerrumError:
    seen = exc
    while seen is not None:
        if isinstance(seen, FerrumError):
            return seen
        seen = getattr(seen, "cause", None) or seen.__cause__
    return wrap_unexpected(exc, "running the batch on Ray")


def run_batch(sources: list, options: BatchOptions, *, on_progress: Callable[[BatchProgress], None] | None = None,
              on_start: Callable[[str], None] | None = None, cancel: CancelToken | None = None) -> BatchSummary:
    """Transcribe every file under ``sources`` into ``options.output_dir``; see the module doc.

    ``on_start`` gets one line describing the cluster and the workers once Ray is up. The
    summary is also saved as ``ferrum-batch-summary.json`` in the output folder. Cancelling
    stops at the next finished file; everything written so far is kept (a rerun resumes)."""
    options.validate()
    started = time.perf_counter()
    postprocess = speaker_labeller(options.speakers) if options.speakers is not None else None
    items = plan_items(sources, options.output_dir, options.fmt)
    summary = BatchSummary(str(options.output_dir), files_total=len(items), cluster=options.cluster)
    sink = IndexSink(options.db, options.index) if options.index else None
    try:
        rows = _pending(items, options, sink, summary)
        if rows:
            _run_rows(rows, options, sink, summary, postprocess, on_progress, on_start, cancel)
    finally:
        if sink is not None:
            sink.close()
        summary.wall_seconds = time.perf_counter() - started
        options.output_dir.mkdir(parents=True, exist_ok=True)
        summary.save(options.output_dir / SUMMARY_NAME)
    return summary


def _run_rows(rows, options, sink, summary, postprocess, on_progress, on_start, cancel) -> None:
    durations = _Durations(r["source"] for r in rows if not r["text"])
    drain = _Drain(rows, sink, summary, on_progress, durations)
    with ray_cluster(options.cluster, num_cpus=options.local_cpus) as info:
        import ray
        from ray.data import DataContext

        res = plan_resources(info, options)
        if on_start is not None:
            on_start(f"Ray {ray.__version__}: {info.nodes} node(s), {info.cpus:g} CPU, {info.gpus:g} GPU; "
                     f"{res.describe()}")
        ctx = DataContext.get_current()
        saved = (ctx.enable_progress_bars, ctx.print_on_execution_start, ctx.max_errored_blocks)
        ctx.enable_progress_bars, ctx.print_on_execution_start = False, False
        ctx.max_errored_blocks = -1  # a file Ray gave up on is reported, the others go on
        drain.progress()
        try:
            for row in _build(ray, rows, options, res, postprocess).iter_rows():
                drain.take(row)
                if cancel is not None and cancel.cancelled:
                    summary.cancelled = True
                    return
        except (Cancelled, KeyboardInterrupt):
            summary.cancelled = True
            raise
        except FerrumError:
            raise
        except Exception as exc:
            raise _ray_error(exc) from exc
        finally:
            ctx.enable_progress_bars, ctx.print_on_execution_start, ctx.max_errored_blocks = saved
    drain.lost()
