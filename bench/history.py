"""What committing every Whisper segment to the transcript history costs.

Ferrum's history (WAL journal, synchronous=NORMAL, one commit per segment) against two peers timed
in the same run, interleaved: SQLite's defaults (rollback journal, synchronous=FULL) with the same
commit per segment, and a batched writer that commits a whole transcript at the end (no crash
safety). Prints median milliseconds per segment and the ratio to each peer, plus list()/load()
times on a history of many records.

    python bench/history.py [--segments 40] [--reps 15]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import format_table, interleaved, median
from executors.transcripts.history import TranscriptHistory
from executors.transcripts.results import Segment, Transcript


def _segments(n: int) -> list[Segment]:
    return [Segment(id=i, start=i * 4.0, end=i * 4.0 + 3.5, text=f" Segment number {i} of a long meeting.",
                    tokens=list(range(50364, 50364 + 24)), avg_logprob=-0.3) for i in range(n)]


def _defaults_peer(path: Path) -> TranscriptHistory:
    history = TranscriptHistory(path)
    history._db.execute("PRAGMA journal_mode=DELETE")  # bench only: SQLite's out-of-the-box settings
    history._db.execute("PRAGMA synchronous=FULL")
    return history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=40)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    segs = _segments(args.segments)
    final = Transcript("en", 1.0, segs[-1].end, segs)
    with tempfile.TemporaryDirectory() as tmp:
        ferrum = TranscriptHistory(Path(tmp) / "wal.sqlite3")
        defaults = _defaults_peer(Path(tmp) / "rollback.sqlite3")
        batched = TranscriptHistory(Path(tmp) / "batched.sqlite3")

        def per_segment(history):
            def run():
                rid = history.begin("meeting.wav", "whisper-tiny.en", None)
                for seg in segs:
                    history.append_segment(rid, seg)
                history.finish(rid, final)
            return run

        def at_end():
            rid = batched.begin("meeting.wav", "whisper-tiny.en", None)
            batched.finish(rid, final)  # finish() writes every segment it has not seen yet

        times = interleaved({"ferrum (WAL, commit per segment)": per_segment(ferrum),
                             "sqlite defaults (commit per segment)": per_segment(defaults),
                             "commit once at the end (not crash-safe)": at_end}, args.reps)
        base = median(times["ferrum (WAL, commit per segment)"])
        rows = [[name, f"{1000 * median(t) / args.segments:.3f}", f"{median(t) / base:.2f}"]
                for name, t in times.items()]
        print(f"{args.segments} segments per transcript, {args.reps} interleaved repetitions (medians)")
        print(format_table(["writer", "ms / segment", "time vs ferrum"], rows))

        for _ in range(300):  # a history of ~300 transcripts for the list/load figures
            per_segment(ferrum)()
        entries = ferrum.list()
        t0 = time.perf_counter()
        for _ in range(10):
            ferrum.list()
        list_ms = (time.perf_counter() - t0) * 100
        t0 = time.perf_counter()
        for e in entries[:50]:
            ferrum.load(e.id)
        load_ms = (time.perf_counter() - t0) * 1000 / 50
        print(f"\nlist() of {len(entries)} records: {list_ms:.1f} ms;  load() of one {args.segments}-segment "
              f"record: {load_ms:.2f} ms")
        for h in (ferrum, defaults, batched):
            h.close()


if __name__ == "__main__":
    main()
