"""Start-up time of ``ferrum-gui`` to a shown main window, against a bare PySide6 window (the peer).

Runs both interleaved in fresh processes (offscreen) and prints medians and their ratio:

    python bench/gui_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEER = ("import time; t = time.perf_counter(); from PySide6.QtWidgets import QApplication, QMainWindow; "
        "app = QApplication([]); w = QMainWindow(); w.resize(1200, 780); w.show(); app.processEvents(); "
        "print(f'window shown in {(time.perf_counter() - t) * 1000:.0f} ms')")


def run(cmd: list[str], env: dict) -> float:
    """Wall time of the whole process (interpreter start included), in ms."""
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ferrum-bench-"))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", FERRUM_DATA_DIR=str(tmp / "data"),
               XDG_CONFIG_HOME=str(tmp / "config"))
    app_ms, peer_ms = [], []
    for _ in range(args.runs):
        app_ms.append(run([sys.executable, "-m", "ferrum_gui.app", "--quit-after-show"], env))
        peer_ms.append(run([sys.executable, "-c", PEER], env))
    a, p = statistics.median(app_ms), statistics.median(peer_ms)
    print(f"process start to window shown, median of {args.runs} (offscreen):")
    print(f"  ferrum-gui            {a:7.0f} ms")
    print(f"  bare PySide6 window   {p:7.0f} ms")
    print(f"  ratio                 {a / p:7.2f}x")


if __name__ == "__main__":
    main()
