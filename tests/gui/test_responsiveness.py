"""The GUI thread stays responsive while a transcription runs: a 10 ms QTimer measures stalls.

The same timer first runs for a few seconds with nothing to do, so the printed figures separate
the app's own stalls from those of a busy machine.
"""

from __future__ import annotations

import asyncio
import time

import numpy as np
import soundfile as sf
from PySide6.QtCore import QTimer

CLIPS = [f"pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0{n}.flac" for n in (870, 880, 890)]


class StallMeter:
    """Gaps between ticks of a 10 ms timer on the GUI thread (a gap far above 10 ms is a stall)."""

    def __init__(self):
        self.gaps: list[float] = []
        self._last = 0.0
        self._timer = QTimer()
        self._timer.setInterval(10)
        self._timer.timeout.connect(self._tick)

    def _tick(self):
        now = time.perf_counter()
        self.gaps.append(now - self._last)
        self._last = now

    def __enter__(self):
        self._last = time.perf_counter()
        self._timer.start()
        return self

    def __exit__(self, *exc):
        self._timer.stop()
        self._timer.deleteLater()

    def summary(self) -> str:
        ms = np.array(self.gaps[1:]) * 1000
        return (f"{len(ms)} ticks, longest stall {ms.max():.1f} ms, p99 {np.percentile(ms, 99):.1f} ms, "
                f"median {np.median(ms):.1f} ms")

    @property
    def longest_ms(self) -> float:
        return max(self.gaps[1:]) * 1000


def test_event_loop_stall_while_transcribing(main_window, host, run_async, speech_dir, tmp_path):
    audio = np.concatenate([sf.read(str(speech_dir / c), dtype="float32")[0] for c in CLIPS])
    path = tmp_path / "long.wav"
    sf.write(str(path), audio, 16000)
    main_window.show_panel("monitor")  # the busiest panel: tables at 2 Hz, plots at 1 Hz

    with StallMeter() as idle:
        run_async(asyncio.sleep(3))
    with StallMeter() as busy:
        transcript = run_async(host.transcribe(path), timeout=600)

    assert transcript.segments and len(busy.gaps) > 10 and len(idle.gaps) > 10
    print(f"\nGUI event loop, idle for 3 s:            {idle.summary()}"
          f"\nGUI event loop, {len(audio) / 16000:.1f} s transcription: {busy.summary()}")
    assert busy.longest_ms < 1000
