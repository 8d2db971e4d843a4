"""Build the one-folder bundle with PyInstaller, smoke-test it and print its size.

    python packaging/build.py [--multilingual] [--no-smoke] [--clean]
    python packaging/build.py --skip-build [--startup-runs 5]   # smoke-test / time an existing build

Output: ``packaging/dist/ferrum-desktop/`` (``ferrum-gui``, ``ferrum`` and ``_internal/``); on macOS also
``packaging/dist/Ferrum Desktop.app``. Needs the ``packaging`` extra: ``pip install -e '.[packaging]'``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPEC = HERE / "pyinstaller" / "ferrum-desktop.spec"
DIST = HERE / "dist"
WORK = HERE / "build"
EXE_SUFFIX = ".exe" if sys.platform == "win32" else ""
# a clip of the repository's own test data (tests/data/speech) and its reference
SPEECH_SAMPLE = (HERE.parent / "tests" / "data" / "speech" / "pocketsphinx" / "goforward.flac", "go forward ten meters")


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def build(multilingual: bool, clean: bool) -> Path:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if multilingual:
        env["FERRUM_BUNDLE_MULTILINGUAL"] = "1"
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--distpath", str(DIST), "--workpath", str(WORK)]
    if clean:
        cmd.append("--clean")
    subprocess.run([*cmd, str(SPEC)], check=True, env=env)
    return DIST / "ferrum-desktop"


def smoke(folder: Path) -> None:
    """Both programs start from the bundle: CLI help and model list, a real transcription with VAD and an
    embedding (bundled models, silero's TorchScript model, PyAV), and the GUI's window (offscreen)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    cli, gui = str(folder / f"ferrum{EXE_SUFFIX}"), str(folder / f"ferrum-gui{EXE_SUFFIX}")
    out_dir = Path(tempfile.mkdtemp(prefix="ferrum-smoke-"))
    clip, reference = SPEECH_SAMPLE
    checks = [([cli, "--help"], None), ([cli, "models"], None),
              ([cli, "transcribe", "--vad", "--threads", "1", "-o", str(out_dir), str(clip)], None),
              ([cli, "embed", "--json", "--threads", "1"], "a bundled sentence\n"),
              ([gui, "--quit-after-show"], None)]
    for cmd, stdin in checks:
        done = subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True, timeout=600, check=False)
        print(f"$ {Path(cmd[0]).name} {' '.join(cmd[1:])}  -> rc {done.returncode}")
        print((done.stdout + done.stderr).strip()[-600:])
        if done.returncode != 0:
            raise SystemExit(f"smoke test failed: {cmd}")
    text = (out_dir / f"{clip.stem}.txt").read_text(encoding="utf-8").strip()
    print(f"transcript: {text!r} (reference {reference!r})")
    if not text:
        raise SystemExit("smoke test failed: the bundle transcribed nothing")
    shutil.rmtree(out_dir, ignore_errors=True)


def startup_seconds(folder: Path, runs: int) -> None:
    """``--quit-after-show`` wall time of the bundle's ferrum-gui against the venv's, interleaved, medians."""
    venv_gui = shutil.which("ferrum-gui", path=str(Path(sys.executable).parent))
    if venv_gui is None:
        print("no ferrum-gui next to this Python: startup comparison skipped")
        return
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    peers = {"bundle": str(folder / f"ferrum-gui{EXE_SUFFIX}"), "venv": venv_gui}
    times: dict[str, list[float]] = {name: [] for name in peers}
    for _ in range(runs):
        for name, exe in peers.items():
            started = time.perf_counter()
            subprocess.run([exe, "--quit-after-show"], env=env, capture_output=True, check=True, timeout=300)
            times[name].append(time.perf_counter() - started)
    bundle, venv = (statistics.median(times[n]) for n in ("bundle", "venv"))
    print(f"ferrum-gui --quit-after-show, median of {runs}: bundle {bundle:.2f} s, venv {venv:.2f} s, "
          f"ratio bundle/venv {bundle / venv:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--multilingual", action="store_true", help="also bundle Whisper base (multilingual extra)")
    parser.add_argument("--no-smoke", action="store_true", help="skip starting the built programs")
    parser.add_argument("--clean", action="store_true", help="empty PyInstaller's cache first")
    parser.add_argument("--skip-build", action="store_true", help="use the existing packaging/dist build")
    parser.add_argument("--startup-runs", type=int, default=0, metavar="N",
                        help="time the GUI's start-up N times against the venv's (interleaved)")
    args = parser.parse_args(argv)
    folder = DIST / "ferrum-desktop" if args.skip_build else build(args.multilingual, args.clean)
    if not folder.is_dir():
        raise SystemExit(f"{folder} does not exist: run without --skip-build first")
    if not args.no_smoke:
        smoke(folder)
    if args.startup_runs:
        startup_seconds(folder, args.startup_runs)
    print(f"{folder}: {folder_bytes(folder) / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
