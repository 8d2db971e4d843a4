"""``ferrum batch SRC... --output-dir OUT``: transcribe (and index) a whole archive on Ray.

Files whose output exists are skipped, so an interrupted run resumes where it stopped. Progress
(files, hours of audio, ETA) goes to stderr; the written paths are not listed one by one (an
archive has thousands), the summary at the end says what happened and where it is saved.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .transcribe_cmd import add_transcription_arguments, speaker_request, transcribe_options


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "batch", help="transcribe (and index) many files on a Ray cluster, resumably",
        description="Transcribe files, folders (recursively) or list files of paths with Ray: on this machine "
                    "(--cluster local) or on a cluster. A second run over the same output folder skips the "
                    "files already written.")
    p.add_argument("sources", nargs="+", metavar="SRC", help="audio/video files, folders, or .txt/.lst lists of paths")
    p.add_argument("--output-dir", "-o", type=Path, required=True, help="where the transcripts go (folders mirrored)")
    add_transcription_arguments(p, threads_help="CPU threads per transcription worker (default: 1, as many "
                                                "workers as cores; more threads on nodes over 16 cores)")
    p.add_argument("--cluster", default="local",
                   help="local (start Ray on this machine, loopback only; default), auto (the cluster in "
                        "RAY_ADDRESS), or ray://HOST:PORT")
    p.add_argument("--batch-size", type=int, default=1,
                   help="30 s windows decoded together; above 1, windows of several files share a batch (default: 1)")
    p.add_argument("--workers", type=int, default=None,
                   help="transcription workers (default: one per GPU, else one per CPU core, up to 16 per node)")
    p.add_argument("--local-cpus", type=int, default=None, help="CPUs a local cluster may use (default: all)")
    p.add_argument("--index", metavar="COLLECTION", default=None,
                   help="also index the transcripts into this search collection")
    p.add_argument("--db", type=Path, default=None, help="search database for --index (default: the app's)")
    p.add_argument("--overwrite", action="store_true", help="redo files whose output already exists")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument("--verbose", "-v", action="store_true", help="let Ray print its own logs too")
    p.set_defaults(func=run)


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h" if seconds >= 360 else f"{seconds / 60:.1f} min"


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class _ProgressLine:
    """A tqdm bar over files, with hours of audio done and an ETA from the audio rate."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self._bar = None

    def __call__(self, p) -> None:
        from tqdm import tqdm

        if self._bar is None:
            self._bar = tqdm(total=p.files_total, unit="file", file=sys.stderr, disable=self.quiet,
                             bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} files [{elapsed}] {postfix}")
        total = f"/{_hours(p.audio_total_s)}" if p.audio_total_s else ""
        failed = f", {p.files_failed} failed" if p.files_failed else ""
        self._bar.set_postfix_str(f"{_hours(p.audio_done_s)}{total} audio{failed}, ETA {_clock(p.eta_s)}",
                                  refresh=False)
        self._bar.n = p.files_done
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _report(summary, out: Path) -> None:
    rate = summary.audio_seconds / summary.wall_seconds if summary.wall_seconds else 0.0
    print(f"ferrum batch: {summary.written} written, {summary.skipped} already done, {len(summary.failed)} failed"
          f"{f', {summary.indexed} indexed' if summary.indexed else ''}; {_hours(summary.audio_seconds)} of audio "
          f"in {_clock(summary.wall_seconds)} ({rate:.1f} audio-hours/hour)"
          f"{' - cancelled, run again to resume' if summary.cancelled else ''}", file=sys.stderr)
    for failure in summary.failed:
        print(f"ferrum batch: {failure['source']}: {failure['error']}", file=sys.stderr)
    for failure in summary.index_failed:
        print(f"ferrum batch: not indexed: {failure['output']}: {failure['error']}", file=sys.stderr)
    print(f"ferrum batch: outputs in {out}, summary in {out / 'ferrum-batch-summary.json'}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from executors.batch import BatchOptions, run_batch
    from executors.batch.cluster import quiet_ray_logs

    options = BatchOptions(
        output_dir=args.output_dir.expanduser().absolute(), fmt=args.fmt, transcribe=transcribe_options(args),
        model=args.model, device=args.device, threads=args.threads, workers=args.workers,
        batch_size=args.batch_size, index=args.index, db=args.db, speakers=speaker_request(args), overwrite=args.overwrite,
        cluster=args.cluster, local_cpus=args.local_cpus).validate()
    if not args.verbose:
        quiet_ray_logs(options.cluster)
    progress = _ProgressLine(args.quiet)
    try:
        summary = run_batch(args.sources, options, on_progress=progress,
                            on_start=None if args.quiet else lambda line: print(f"ferrum batch: {line}", file=sys.stderr))
    finally:
        progress.close()
    _report(summary, options.output_dir)
    return 0 if summary.ok else 1
