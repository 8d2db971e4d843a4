"""Live dictation latency with and without typing into another app (X11), interleaved.

Starts a private Xvfb display with an xterm that has the keyboard focus, then alternates live
runs of ``bench/dictation.py`` over the same utterances at real-time pace: one plain, one that also
types every committed phrase into the xterm (xdotool, as ``ferrum dictate --type`` and the app do).
Prints each run and the medians side by side; the plain run is the peer.  First, the cost of
typing itself: what ``TypingSession.feed`` takes on the engine's event thread, and the wall and
CPU time (ours plus xdotool's) of typing each phrase on the typing thread.

    python bench/dictation_typing.py                 # 3 rounds of 10 utterances
    python bench/dictation_typing.py --rounds 5 --count 20
    python bench/dictation_typing.py --skip-live     # only the cost of typing
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.common import dev_slice, format_table, median
from bench.dictation import live, load_executor


def figures(summary) -> dict[str, float]:
    return {"latency p50 ms": float(np.percentile(summary.latencies, 50)) * 1000,
            "latency p95 ms": float(np.percentile(summary.latencies, 95)) * 1000,
            "lag p50 ms": float(np.percentile(summary.lags, 50)) * 1000, "engine RTF": summary.rtf}


PHRASES = ["He", "was not an ill-disposed young man.", "Unless to be rather", "cold-hearted and", "rather selfish",
           "is to be ill-disposed.", "He might even have", "been made amiable himself."]


def typing_cost(rounds: int) -> None:
    """Per phrase: feed() on the event thread; typing wall and CPU (this process + children)."""
    from executors.dictation.events import Committed
    from executors.dictation.typing import TypingSession, make_typist

    feed_us, wall_ms, cpu_ms, chars = [], [], [], 0
    for _ in range(rounds):
        session = TypingSession(make_typist())
        for text in PHRASES:
            before = _cpu()
            t0 = time.perf_counter()
            session.feed(Committed(text, 0.0, 1.0))
            feed_us.append((time.perf_counter() - t0) * 1e6)
            while session.pending:
                time.sleep(0.001)
            wall_ms.append((time.perf_counter() - t0) * 1000)
            cpu_ms.append((_cpu() - before) * 1000)
        chars += len(session.typed)
        session.close()
    print(f"\nTyping cost, {len(PHRASES)} phrases x {rounds} rounds ({chars} characters typed into the xterm):")
    print(format_table(["figure", "median", "max"], [
        ["feed() on the event thread, µs", f"{median(feed_us):.0f}", f"{max(feed_us):.0f}"],
        ["typing one phrase, wall ms", f"{median(wall_ms):.0f}", f"{max(wall_ms):.0f}"],
        ["typing one phrase, CPU ms (ours + xdotool)", f"{median(cpu_ms):.0f}", f"{max(cpu_ms):.0f}"],
    ]))


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--count", type=int, default=10, help="dev utterances per run")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--skip-live", action="store_true", help="only the cost of typing")
    args = p.parse_args()
    from tests.x11 import open_target, start_xvfb

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so the Xvfb and the xterm are ended below
    server, why = start_xvfb()
    if server is None:
        sys.exit(f"cannot start Xvfb: {why}")
    target = None
    try:
        os.environ["DISPLAY"] = server.display
        os.environ.pop("WAYLAND_DISPLAY", None)
        target = open_target(server, Path(tempfile.mkdtemp(prefix="ferrum-bench-")) / "typed.txt")
        typing_cost(args.rounds)
        if args.skip_live:
            return
        ex = load_executor(args.threads, "int8")
        utterances = dev_slice(args.count)
        runs: dict[bool, list[dict]] = {False: [], True: []}
        for i in range(args.rounds):
            for typed in ((False, True) if i % 2 == 0 else (True, False)):  # alternate who goes first
                runs[typed].append(figures(live(ex, utterances, 1.0, 1.0, 1.0, 1.0, True, type_text=typed)))
        print(f"\nTyped into the xterm: {len(target.text())} characters over {args.rounds} runs")
        keys = list(runs[False][0])
        rows = [[k, f"{median([r[k] for r in runs[False]]):.3g}", f"{median([r[k] for r in runs[True]]):.3g}",
                 f"{median([r[k] for r in runs[True]]) / median([r[k] for r in runs[False]]):.2f}"] for k in keys]
        print(f"\nMedians over {args.rounds} interleaved runs each ({args.count} utterances, tiny.en int8, "
              f"{args.threads} threads, real-time pace):")
        print(format_table(["figure", "plain", "typing (xdotool)", "typing / plain"], rows))
    finally:
        if target is not None:
            target.close()
        server.stop()


if __name__ == "__main__":
    main()
