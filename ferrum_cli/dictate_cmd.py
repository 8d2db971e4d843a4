"""``ferrum dictate``: live dictation from a microphone (or a file played at real-time pace).

Committed text is printed as soon as it is final; ``--json`` prints one event per line and a
summary line at the end.  Ctrl+C stops: the open utterance is finalised and the summary printed.
The session lands in the transcript history (with its audio when ``--save`` records it) unless
``--no-history``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import dictate_typing


def register(subparsers) -> None:
    p = subparsers.add_parser("dictate", help="live dictation from the microphone",
                              description="Transcribe speech live from an input device (or a file played in real time).")
    p.add_argument("--device", "-d", default=None, help="input device index or (part of its) name (default: system default)")
    p.add_argument("--list-devices", action="store_true", help="list input devices and exit")
    p.add_argument("--from-file", type=Path, default=None, metavar="WAV", help="play this audio file instead of the microphone")
    p.add_argument("--speed", type=float, default=1.0, help="with --from-file: 1 = real time, 0 = as fast as possible")
    p.add_argument("--json", action="store_true", help="one JSON event per line, then a summary line")
    p.add_argument("--model", "-m", default=None, help="model reference (default: whisper-tiny.en)")
    p.add_argument("--language", "-l", default=None, help="spoken language (multilingual models)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads")
    p.add_argument("--step", type=float, default=None,
                   help="re-transcribe every STEP seconds of new audio (default: 1 s)")
    p.add_argument("--save", type=Path, default=None, metavar="FLAC", help="also record the session audio here")
    dictate_typing.add_arguments(p)
    p.add_argument("--no-history", action="store_true", help="do not keep the session in the history")
    p.set_defaults(func=run)


def _list_devices(as_json: bool) -> int:
    from executors.dictation import list_input_devices

    devices = list_input_devices()
    if as_json:
        for d in devices:
            print(json.dumps({"index": d.index, "name": d.name, "hostapi": d.hostapi, "channels": d.channels,
                              "samplerate": d.default_samplerate, "default": d.is_default}))
    elif not devices:
        print("No audio input devices found.")
    for d in [] if as_json else devices:
        mark = "*" if d.is_default else " "
        print(f"{mark} {d.index:3d}  {d.name}  ({d.hostapi}, {d.channels} ch, {d.default_samplerate:.0f} Hz)")
    return 0


def event_dict(event) -> dict | None:
    from executors.dictation import Committed, Overrun, Tentative, UtteranceEnd

    if isinstance(event, Committed):
        return {"type": "committed", "text": event.text, "audio_start": round(event.audio_start, 3),
                "audio_end": round(event.audio_end, 3), "lag_ms": round(event.lag * 1000, 1)}
    if isinstance(event, Tentative):
        return {"type": "tentative", "text": event.text}
    if isinstance(event, UtteranceEnd):
        return {"type": "utterance_end", "text": event.text, "audio_start": round(event.audio_start, 3),
                "audio_end": round(event.audio_end, 3), "latency_ms": round(event.latency * 1000, 1)}
    if isinstance(event, Overrun):
        return {"type": "overrun", "dropped_seconds": round(event.dropped_seconds, 3)}
    return None  # Level events are for meters, not for the terminal


def _print(event, as_json: bool) -> None:
    from executors.dictation import Committed, Overrun, UtteranceEnd

    if as_json:
        if (d := event_dict(event)) is not None:
            print(json.dumps(d), flush=True)
    elif isinstance(event, Committed):
        print(event.text, end=" ", flush=True)
    elif isinstance(event, UtteranceEnd):
        print(flush=True)
    elif isinstance(event, Overrun):
        print(f"\n[decoding fell behind: {event.dropped_seconds:.2f} s of audio dropped]", file=sys.stderr)


def run(args) -> int:
    if args.list_devices:
        return _list_devices(args.json)
    import queue

    from executors.dictation import DictationOptions, FileSource, MicrophoneSource
    from executors.service import WHISPER

    from .engine import load, open_engine

    typing = dictate_typing.start_typing(args)
    source = (FileSource(args.from_file, speed=args.speed) if args.from_file is not None
              else MicrophoneSource(args.device))
    options = DictationOptions(language=args.language, record_path=args.save,
                               **({"step_s": args.step} if args.step else {}))
    with open_engine(args, whisper_model=args.model) as engine:
        load(engine, WHISPER, quiet=args.json)
        events: queue.Queue = queue.Queue()
        if not args.json:
            print(f"Dictating from {source.name} — Ctrl+C to stop.", file=sys.stderr)
        run_ = engine.dictation.start(source, options, on_event=events.put, record=False)
        while not (run_.future.done() and events.empty()):
            try:
                event = events.get(timeout=0.2)
            except queue.Empty:
                continue
            except KeyboardInterrupt:
                run_.stop()
                continue
            if typing is not None:
                typing.feed(event)
            _print(event, args.json)
        error = run_.future.exception()
        session = run_.session
        if session.summary is not None and not args.no_history:
            saved = engine.dictation.save([session.id])
            if saved and not args.json:
                print(f"Saved to the history as #{saved[0]}", file=sys.stderr)
    typing_status = dictate_typing.finish_typing(typing)
    summary = session.summary.to_dict() if session.summary is not None else {}
    if args.json:
        print(json.dumps(summary), flush=True)
    elif summary:
        print(f"\n{summary['utterances']} utterances, latency p50 {summary['latency_p50_ms']} ms / p95 "
              f"{summary['latency_p95_ms']} ms, RTF {summary['rtf']}", file=sys.stderr)
    if error is not None:
        raise error
    return typing_status
