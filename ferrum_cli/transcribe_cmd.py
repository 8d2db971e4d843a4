"""``ferrum transcribe FILE...``: one transcript file per input, progress on stderr.

Each transcript also lands in the transcript history (``ferrum history``) unless ``--no-history``.
A failed input prints one line and the others still run; the exit status is 1 if any failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from executors.transcripts.exporters import EXPORT_FORMATS  # light: no torch, no numpy


def register(subparsers) -> None:
    p = subparsers.add_parser("transcribe", help="transcribe audio/video files to text or subtitles",
                              description="Transcribe audio or video files with a local Whisper model.")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="audio or video files (WAV, FLAC, MP3, OGG, M4A, MP4, WebM, ...)")
    p.add_argument("--model", "-m", default=None,
                   help="model reference: whisper-tiny.en (default), whisper-base, or a model folder")
    p.add_argument("--language", "-l", default=None, help="spoken language code (default: detect; 'en' for .en models)")
    p.add_argument("--task", choices=("transcribe", "translate"), default="transcribe",
                   help="translate = speech in any language to English text")
    p.add_argument("--format", "-f", choices=EXPORT_FORMATS, default="txt", dest="fmt",
                   help="output format (default: txt)")
    p.add_argument("--output-dir", "-o", type=Path, default=Path("."), help="where to write the files (default: .)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: one per core, up to 8)")
    p.add_argument("--beam-size", type=int, default=1, help="beam width; 1 = greedy (default)")
    p.add_argument("--word-timestamps", action="store_true", help="time every word (JSON output lists them)")
    p.add_argument("--vad", action="store_true", help="skip silence with Silero VAD before transcribing")
    p.add_argument("--no-history", action="store_true", help="do not keep the transcripts in the history")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _output_path(out_dir: Path, source: Path, fmt: str, taken: set[Path]) -> Path:
    """``out_dir/<stem>.<fmt>``, numbered when two inputs share a stem."""
    path, n = out_dir / f"{source.stem}.{fmt}", 2
    while path in taken:
        path, n = out_dir / f"{source.stem}-{n}.{fmt}", n + 1
    taken.add(path)
    return path


class _ProgressBar:
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


def _transcribe_one(engine, path: Path, options, args, out_path: Path) -> Path:
    from executors.audio.decode import audio_duration
    from executors.transcripts.exporters import write_transcript

    from .engine import wait_for

    bar = _ProgressBar(path.name, audio_duration(path), args.quiet)  # also rejects bad files up front
    finished = False
    try:
        job = engine.transcribe(path, options, save=not args.no_history, on_progress=bar)  # streams the file
        result = wait_for(job)
        finished = True
    finally:
        bar.close(finished)
    return write_transcript(result.transcript, args.fmt, out_path)


def run(args: argparse.Namespace) -> int:
    from executors.core.errors import FerrumError, wrap_unexpected
    from executors.service import WHISPER
    from executors.whisper.options import TranscribeOptions

    from .engine import load, open_engine

    options = TranscribeOptions(language=args.language, task=args.task, beam_size=args.beam_size,
                                word_timestamps=args.word_timestamps, vad_filter=args.vad).validate()
    # (transcripts become searchable in the app, or with `ferrum index --transcripts`)
    with open_engine(args, whisper_model=args.model, auto_index_transcripts=False) as engine:
        load(engine, WHISPER, args.quiet)
        taken: set[Path] = set()
        failed = 0
        for name in args.files:
            path = Path(name)
            try:
                out = _transcribe_one(engine, path, options, args, _output_path(args.output_dir, path, args.fmt, taken))
                print(out)
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # noqa: BLE001 - one line per failed input, then go on
                err = exc if isinstance(exc, FerrumError) else wrap_unexpected(exc, f"transcribing {name}")
                print(f"ferrum transcribe: {name}: {err}", file=sys.stderr)
                failed += 1
    return 1 if failed else 0
