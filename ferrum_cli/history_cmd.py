"""``ferrum history list|show|export|delete``: the transcript history the app, ``ferrum transcribe``,
``ferrum dictate`` and ``ferrum serve`` all write to. No model is loaded."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from executors.transcripts.exporters import EXPORT_FORMATS  # light: no torch, no numpy


def register(subparsers) -> None:
    p = subparsers.add_parser("history", help="list, show, export or delete past transcripts",
                              description="The transcript history shared by the app, the CLI and the API.")
    p.add_argument("--db", type=Path, default=None, help="history database (default: the data folder's)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)

    v = verbs.add_parser("list", help="one line per transcript, newest first")
    v.add_argument("--limit", "-n", type=int, default=None, help="at most this many")
    v.add_argument("--json", action="store_true", help="print a JSON array")
    v.set_defaults(func=run_list)

    v = verbs.add_parser("show", help="a transcript with its timestamps")
    v.add_argument("id", type=int, metavar="ID")
    v.add_argument("--json", action="store_true", help="print the record and its segments as JSON")
    v.set_defaults(func=run_show)

    v = verbs.add_parser("export", help="write a transcript as text, subtitles or JSON")
    v.add_argument("id", type=int, metavar="ID")
    v.add_argument("--format", "-f", choices=EXPORT_FORMATS, default=None, dest="fmt",
                   help="output format (default: from --output's extension, else txt)")
    v.add_argument("--output", "-o", type=Path, default=None, help="file to write (default: standard output)")
    v.set_defaults(func=run_export)

    v = verbs.add_parser("delete", help="delete transcripts (and their search entries)")
    v.add_argument("ids", type=int, nargs="+", metavar="ID")
    v.set_defaults(func=run_delete)


def _entry_dict(entry) -> dict:
    data = asdict(entry)
    data.update(status=entry.status.value, name=entry.name)
    return data


def run_list(args) -> int:
    from .engine import open_engine

    with open_engine(args, history_db=args.db) as engine:
        entries = engine.history.list(args.limit)
    if args.json:
        json.dump([_entry_dict(e) for e in entries], sys.stdout, indent=2, ensure_ascii=False)
        print()
        return 0
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.created))
        print(f"{e.id:5d}  {when}  {e.kind:<9} {e.status.value:<11} {e.duration:7.1f} s  {e.language or '-':<3} "
              f"{e.name}")
    if not entries:
        print("the history is empty", file=sys.stderr)
    return 0


def run_show(args) -> int:
    from executors.transcripts.exporters import format_timestamp

    from .engine import open_engine

    with open_engine(args, history_db=args.db) as engine:
        record = engine.history.load(args.id)
    if args.json:
        data = {k: v for k, v in asdict(record).items() if k not in ("transcript", "edited_segments")}
        data.update(status=record.status.value, edited_segments=sorted(record.edited_segments),
                    transcript=record.transcript.to_dict())
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False, default=str)
        print()
        return 0
    print(f"#{record.id} {record.source} ({record.kind}, {record.status.value}, {record.model_id or 'unknown model'})",
          file=sys.stderr)
    for seg in record.transcript.segments:
        print(f"[{format_timestamp(seg.start, 'vtt')} --> {format_timestamp(seg.end, 'vtt')}] {seg.text.strip()}")
    return 0


def run_export(args) -> int:
    from .engine import open_engine

    with open_engine(args, history_db=args.db) as engine:
        written = engine.history.export(args.id, args.output, args.fmt)
    if args.output is None:
        sys.stdout.write(written)
    else:
        print(written)
    return 0


def run_delete(args) -> int:
    from .engine import open_engine

    with open_engine(args, history_db=args.db) as engine:
        for record_id in args.ids:
            engine.history.delete(record_id)
            print(f"deleted #{record_id}")
    return 0
