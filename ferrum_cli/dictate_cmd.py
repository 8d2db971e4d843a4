"""``ferrum dictate``: live dictation from a microphone (or a file played at real-time pace).

Committed text is printed as soon as it is final; ``--json`` prints one event per line and a
summary line at the end.  Ctrl+C stops: the open utterance is finalised and the summary printed.
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


def run(args) -> int:
    if args.list_devices:
        return _list_devices(args.json)
    import queue
    import threading

    from executors.dictation import (
        Committed,
        DictationEngine,
        DictationOptions,
        FileSource,
        MicrophoneSource,
        Overrun,
        UtteranceEnd,
    )
    from executors.models.store import DEFAULT_WHISPER, resolve_model
    from executors.whisper import WhisperModelExecutor

    typing = dictate_typing.start_typing(args)
    source = (FileSource(args.from_file, speed=args.speed) if args.from_file is not None
              else MicrophoneSource(args.device))
    resolved = resolve_model(args.model or DEFAULT_WHISPER, kind="whisper")
    ex = WhisperModelExecutor.from_path(resolved.path, threads=args.threads, quantize="auto",
                                        model_id=resolved.model_id)
    events: queue.Queue = queue.Queue()
    engine = DictationEngine(ex, DictationOptions(language=args.language, record_path=args.save,
                                                      **({"step_s": args.step} if args.step else {})),
                             on_event=events.put)
    outcome: list = []

    def work():
        try:
            outcome.append(engine.run(source))
        except BaseException as exc:  # noqa: BLE001 - re-raised below, after the events are printed
            outcome.append(exc)
        events.put(None)

    if not args.json:
        print(f"Dictating from {source.name} — Ctrl+C to stop.", file=sys.stderr)
    worker = threading.Thread(target=work, name="ferrum-dictate", daemon=True)
    worker.start()
    while True:
        try:
            event = events.get(timeout=0.2)
        except queue.Empty:
            continue
        except KeyboardInterrupt:
            engine.stop()
            continue
        if event is None:
            break
        if typing is not None:
            typing.feed(event)
        if args.json:
            if (d := event_dict(event)) is not None:
                print(json.dumps(d), flush=True)
        elif isinstance(event, Committed):
            print(event.text, end=" ", flush=True)
        elif isinstance(event, UtteranceEnd):
            print(flush=True)
        elif isinstance(event, Overrun):
            print(f"\n[decoding fell behind: {event.dropped_seconds:.2f} s of audio dropped]", file=sys.stderr)
    worker.join()
    typing_status = dictate_typing.finish_typing(typing)
    result = outcome[0] if outcome else engine.summary
    summary = engine.summary
    if args.json:
        print(json.dumps(summary.to_dict()), flush=True)
    else:
        d = summary.to_dict()
        print(f"\n{d['utterances']} utterances, latency p50 {d['latency_p50_ms']} ms / p95 {d['latency_p95_ms']} ms, "
              f"RTF {d['rtf']}", file=sys.stderr)
    if isinstance(result, BaseException):
        raise result
    return typing_status
