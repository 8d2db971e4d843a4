"""``ferrum watch DIR``: transcribe every audio or video file that appears or changes in a folder.

Files already there that were never transcribed go first; a file still being copied is waited for.
Each transcript lands in the history and the search index, and with ``--output-beside`` also in a file
next to the recording. What was queued is remembered (in the data folder), so a restart does not
transcribe anything twice. One line per file queued and per file finished; Ctrl+C stops.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from .transcribe_cmd import add_transcription_arguments


def register(subparsers) -> None:
    p = subparsers.add_parser("watch", help="transcribe new or changed audio/video files in a folder",
                              description="Watch a folder and transcribe each audio or video file that appears "
                                          "or changes in it (subfolders too) into the history and the "
                                          "search index.")
    p.add_argument("folder", type=Path, metavar="DIR", help="the folder to watch")
    p.add_argument("--output-beside", action="store_true",
                   help="also write each transcript next to its recording, in --format (talk.mp3 → talk.txt)")
    p.add_argument("--settle", type=float, default=None, metavar="SECONDS",
                   help="how long a file must stay unchanged before it is taken (default: 2); raise it "
                        "for copies that pause, e.g. over a slow network")
    add_transcription_arguments(p)
    p.set_defaults(func=run, batch_size=None)


def run(args: argparse.Namespace) -> int:
    from executors.core.errors import InvalidParameterError
    from executors.service import WHISPER
    from executors.service.watch_transcribe import WatchOptions, WatchTranscriber

    from .engine import load, open_engine
    from .transcribe_cmd import speaker_request, transcribe_options

    options = WatchOptions(output_format=args.fmt if args.output_beside else None,
                           transcribe=transcribe_options(args), speakers=speaker_request(args))
    if args.settle is not None:
        if args.settle <= 0:
            raise InvalidParameterError("--settle must be above 0 seconds", "leave it out for the default")
        options = replace(options, settle_s=args.settle)
    with open_engine(args, whisper_model=args.model) as engine:
        load(engine, WHISPER)
        watch = WatchTranscriber(engine, args.folder, options, on_file=_print)
        try:
            watch.start()
            print(f"Watching {watch.folder} (Ctrl+C stops)", flush=True)
            watch.wait()
        except KeyboardInterrupt:
            print("Stopped watching; files not finished are taken up at the next start", file=sys.stderr)
            return 0
        finally:
            watch.stop()
        raise watch.lost


def _print(outcome) -> None:
    if outcome.state == "queued":
        print(f"queued {outcome.path}", flush=True)
    elif outcome.state == "done":
        written = f" -> {outcome.output}" if outcome.output is not None else ""
        print(f"done {outcome.path}{written}", flush=True)
        if outcome.error is not None:
            print(f"ferrum watch: {outcome.error}", file=sys.stderr, flush=True)
    else:
        print(f"{outcome.state} {outcome.path}: {outcome.error}", file=sys.stderr, flush=True)
