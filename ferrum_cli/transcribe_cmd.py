"""``ferrum transcribe FILE...``: one transcript file per input, progress on stderr.

Each transcript also lands in the transcript history (``ferrum history``) unless ``--no-history``.
A failed input prints one line and the others still run; the exit status is 1 if any failed. An input
cut short (an interrupted copy) is transcribed up to the break, with a warning line.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from executors.transcripts.exporters import EXPORT_FORMATS, SPEAKER_FORMATS  # light: no torch, no numpy
from executors.whisper.options import DEFAULT_BATCH_WINDOWS, DEFAULT_FILES_BATCH  # light too


def register(subparsers) -> None:
    p = subparsers.add_parser("transcribe", help="transcribe audio/video files to text or subtitles",
                              description="Transcribe audio or video files with a local Whisper model.")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="audio or video files (WAV, FLAC, MP3, OGG, M4A, MP4, WebM, ...)")
    p.add_argument("--output-dir", "-o", type=Path, default=Path("."), help="where to write the files (default: .)")
    add_transcription_arguments(p)
    p.add_argument("--batch-size", type=int, default=None, metavar="N",
                   help="30 s windows decoded together, a long file cut into pieces that decode side by side "
                        f"(default: one window at a time; several files share batches of {DEFAULT_FILES_BATCH}, "
                        "each file decoded as when alone; 1 = one window at a time for every file)")
    p.add_argument("--no-history", action="store_true", help="do not keep the transcripts in the history")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def add_transcription_arguments(p, threads_help: str = "CPU threads (default: one per core, up to 8)") -> None:
    """The model, decoding and output-format options ``transcribe`` and ``batch`` share."""
    p.add_argument("--model", "-m", default=None,
                   help="model reference: whisper-tiny.en (default), whisper-base, or a model folder")
    p.add_argument("--language", "-l", default=None, help="spoken language code (default: detect; 'en' for .en models)")
    p.add_argument("--task", choices=("transcribe", "translate"), default="transcribe",
                   help="translate = speech in any language to English text")
    p.add_argument("--format", "-f", choices=EXPORT_FORMATS + SPEAKER_FORMATS, default="txt", dest="fmt",
                   help="output format (default: txt; rttm needs --diarize)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps")
    p.add_argument("--threads", type=int, default=None, help=threads_help)
    p.add_argument("--beam-size", type=int, default=1, help="beam width; 1 = greedy (default)")
    p.add_argument("--word-timestamps", action="store_true", help="time every word (JSON output lists them)")
    p.add_argument("--vad", action="store_true", help="skip silence with Silero VAD before transcribing")
    p.add_argument("--fast-long-files", action="store_true",
                   help="faster on long recordings: speech found by Silero VAD is decoded in "
                        "independent pieces of up to 30 s, 8 at a time (--batch-size changes that); one "
                        "segment per piece, word times with --word-timestamps")
    p.add_argument("--diarize", action="store_true",
                   help="label who speaks each part (implies --word-timestamps; outputs show speaker names)")
    from .diarize_cmd import add_speaker_arguments

    add_speaker_arguments(p)


def transcribe_options(args):
    """``TranscribeOptions`` from the arguments of ``add_transcription_arguments`` (speakers need word times)."""
    from executors.core.errors import InvalidParameterError
    from executors.whisper.options import TranscribeOptions

    if args.threads is not None and args.threads < 1:
        raise InvalidParameterError("--threads must be at least 1", "leave it out to use one thread per core")
    batch = DEFAULT_BATCH_WINDOWS if args.batch_size is None else args.batch_size
    if batch < 1:
        raise InvalidParameterError("--batch-size must be at least 1", "use 1 to decode one window at a time")
    return TranscribeOptions(language=args.language, task=args.task, beam_size=args.beam_size,
                             word_timestamps=args.word_timestamps or args.diarize, vad_filter=args.vad,
                             batch_windows=batch, chunked=args.fast_long_files).validate()


def files_share_batches(options, args):
    """Several files and no ``--batch-size``: their windows share batches, each file decoded as when alone
    (the same text as one after another; for many short files quicker: README "Benchmarks", P4b). A single
    file keeps one window at a time, the fastest measured for a long file at 1 and 2 threads; VAD and fast
    long files plan their own pieces."""
    if args.batch_size is not None or len(args.files) < 2 or options.vad_filter or options.chunked:
        return options
    return replace(options, batch_windows=DEFAULT_FILES_BATCH, split_files=False)


def speaker_request(args):
    """``DiarizationOptions`` when ``--diarize`` was given, else None; speaker counts or RTTM without it are errors."""
    from executors.core.errors import InvalidParameterError

    if args.diarize:
        from .diarize_cmd import speaker_options

        return speaker_options(args)
    if any(v is not None for v in (args.num_speakers, args.min_speakers, args.max_speakers)):
        raise InvalidParameterError("--num-speakers, --min-speakers and --max-speakers need --diarize",
                                    "add --diarize to label the speakers")
    if args.fmt == "rttm":
        raise InvalidParameterError("RTTM lists speaker turns, so it needs --diarize", "add --diarize")
    return None


def output_path(out_dir: Path, source: Path, fmt: str, taken: set[Path]) -> Path:
    """``out_dir/<stem>.<fmt>``, numbered when two inputs share a stem."""
    path, n = out_dir / f"{source.stem}.{fmt}", 2
    while path in taken:
        path, n = out_dir / f"{source.stem}-{n}.{fmt}", n + 1
    taken.add(path)
    return path


class ProgressBar:
    """tqdm bar in audio seconds, fed by the executor's on_progress callback."""

    def __init__(self, name: str, total: float, quiet: bool):
        from tqdm import tqdm

        self._bar = tqdm(total=round(total, 1), desc=name, unit="s", file=sys.stderr, disable=quiet,
                         bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:.1f} s [{elapsed}<{remaining}]")

    def __call__(self, progress) -> None:
        if progress.total:
            self._bar.total = round(progress.total, 1)
        self._bar.n = round(min(progress.done, self._bar.total or progress.done), 1)
        self._bar.refresh()

    def close(self, finished: bool) -> None:
        if finished and self._bar.total:
            self._bar.n = self._bar.total
            self._bar.refresh()
        self._bar.close()


def _transcribe_one(engine, path: Path, options, args, out_path: Path, speakers=None) -> Path:
    from executors.transcripts.exporters import write_transcript

    from .engine import wait_for

    bar = ProgressBar(path.name, 0.0, args.quiet)  # its total: the duration the engine probed, from the first report
    finished = False
    try:
        job = engine.transcribe(path, options, save=not args.no_history, on_progress=bar,  # streams the file
                                speakers=speakers)
        result = wait_for(job)
        finished = True
    finally:
        bar.close(finished)
    _warn_cut_short("transcribe", result.cut_short)
    return write_transcript(result.transcript, args.fmt, out_path)


def run(args: argparse.Namespace) -> int:
    from executors.service import WHISPER

    from .engine import load, open_engine

    options = files_share_batches(transcribe_options(args), args)
    speakers = speaker_request(args)
    # (transcripts become searchable in the app, or with `ferrum index --transcripts`)
    with open_engine(args, whisper_model=args.model, auto_index_transcripts=False) as engine:
        load(engine, WHISPER, args.quiet)
        taken: set[Path] = set()
        if (options.batch_windows > 1 or options.chunked) and len(args.files) > 1:
            return _run_grouped(engine, options, args, speakers, taken)
        return run_each(args.files, "transcribe", "transcribing", lambda path: _transcribe_one(
            engine, path, options, args, output_path(args.output_dir, path, args.fmt, taken), speakers))


def _run_grouped(engine, options, args, speakers, taken: set[Path]) -> int:
    """Many files as one engine job whose windows share batches: each file gets its progress bar in turn
    and is written as soon as it is done; one that fails prints a line and the rest go on."""
    from executors.transcripts.exporters import write_transcript

    from .engine import wait_for

    paths = [Path(name) for name in args.files]
    outputs = [output_path(args.output_dir, path, args.fmt, taken) for path in paths]
    bars: dict[int, ProgressBar] = {}
    failed: list[int] = []

    def bar(i: int) -> ProgressBar:
        if i not in bars:
            bars[i] = ProgressBar(paths[i].name, 0.0, args.quiet)
        return bars[i]

    def on_file(outcome) -> None:
        i = outcome.index
        if i in bars:
            bars[i].close(outcome.error is None)
        try:
            if outcome.error is not None:
                raise outcome.error
            _warn_cut_short("transcribe", outcome.result.cut_short)
            print(write_transcript(outcome.result.transcript, args.fmt, outputs[i]))
        except Exception as exc:  # noqa: BLE001 - one line per failed input, then go on
            _report("transcribe", "transcribing", args.files[i], exc)
            failed.append(i)

    try:
        wait_for(engine.transcribe_many(paths, options, save=not args.no_history, speakers=speakers,
                                        on_file=on_file, on_progress=lambda i, p: bar(i)(p)))
    finally:
        for b in bars.values():
            b.close(False)
    return 1 if failed else 0


def run_each(files: list[str], command: str, doing: str, work) -> int:
    """``work(path) -> output path`` for every input; a failure prints one line and the rest still run."""
    failed = 0
    for name in files:
        try:
            print(work(Path(name)))
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - one line per failed input, then go on
            _report(command, doing, name, exc)
            failed += 1
    return 1 if failed else 0


def _warn_cut_short(command: str, truncations) -> None:
    """One warning line per input that ended early (its audio before the break was used)."""
    for truncation in truncations:
        print(f"ferrum {command}: warning: {truncation.message} ({truncation.hint})", file=sys.stderr)


def _report(command: str, doing: str, name: str, exc: Exception) -> None:
    from executors.core.errors import FerrumError, wrap_unexpected

    err = exc if isinstance(exc, FerrumError) else wrap_unexpected(exc, f"{doing} {name}")
    print(f"ferrum {command}: {name}: {err}", file=sys.stderr)
