"""``ferrum diarize FILE...``: who spoke when, one RTTM or JSON file per input.

A failed input prints one line and the others still run; the exit status is 1 if any failed.
``add_speaker_arguments`` and ``speaker_options`` are shared with ``ferrum transcribe --diarize``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .transcribe_cmd import ProgressBar, output_path, run_each

FORMATS = ("rttm", "json")


def add_speaker_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("speakers")
    g.add_argument("--num-speakers", type=int, default=None, metavar="N", help="exact number of speakers, if known")
    g.add_argument("--min-speakers", type=int, default=None, metavar="N", help="at least N speakers")
    g.add_argument("--max-speakers", type=int, default=None, metavar="N", help="at most N speakers")


def speaker_options(args: argparse.Namespace):
    from executors.diarization import DiarizationOptions

    return DiarizationOptions(num_speakers=args.num_speakers, min_speakers=args.min_speakers or 1,
                              max_speakers=args.max_speakers).validate()


def register(subparsers) -> None:
    p = subparsers.add_parser("diarize", help="find who spoke when (speaker turns as RTTM or JSON)",
                              description="Label the speakers of audio or video files, offline.")
    p.add_argument("files", nargs="+", metavar="FILE", help="audio or video files")
    p.add_argument("--format", "-f", choices=FORMATS, default="rttm", dest="fmt", help="output format (default: rttm)")
    p.add_argument("--output-dir", "-o", type=Path, default=Path("."), help="where to write the files (default: .)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: torch's choice)")
    add_speaker_arguments(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def diarize_with_bar(source, options, name: str, quiet: bool):
    """``diarize`` with a progress bar in audio seconds on stderr."""
    from executors.audio.decode import audio_duration
    from executors.core.types import Progress
    from executors.diarization import diarize

    duration = audio_duration(source)
    bar = ProgressBar(f"{name} (speakers)", duration, quiet)
    finished = False
    try:
        result = diarize(source, options, on_progress=lambda p: bar(Progress(p.fraction * duration, duration)))
        finished = True
    finally:
        bar.close(finished)
    return result


def render(diarization, fmt: str, file_id: str) -> str:
    from executors.transcripts.rttm import rttm_lines

    if fmt == "json":
        return json.dumps({"file": file_id, **diarization.to_dict()}, ensure_ascii=False, indent=2) + "\n"
    return rttm_lines(((t.start, t.end, t.speaker) for t in diarization.turns), file_id)


def run(args: argparse.Namespace) -> int:
    from executors.core.errors import IOError_, InvalidParameterError

    if args.threads is not None:
        if args.threads < 1:
            raise InvalidParameterError("--threads must be at least 1", "leave it out to use every core")
        import torch

        torch.set_num_threads(args.threads)
    options = speaker_options(args)
    taken: set[Path] = set()

    def one(path: Path) -> Path:
        result = diarize_with_bar(path, options, path.name, args.quiet)
        out = output_path(args.output_dir, path, args.fmt, taken)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(render(result, args.fmt, path.stem), encoding="utf-8", newline="\n")
        except OSError as exc:
            raise IOError_(f"Cannot write {out}: {exc.strerror or exc}", "check the folder is writable") from exc
        return out

    return run_each(args.files, "diarize", "diarizing", one)
