"""Build the one-folder bundle with PyInstaller, smoke-test it and print its size.

    python packaging/build.py [--multilingual] [--no-smoke] [--clean]

Output: ``packaging/dist/ferrum-desktop/`` (``ferrum-gui``, ``ferrum`` and ``_internal/``); on macOS also
``packaging/dist/Ferrum Desktop.app``. Needs the ``packaging`` extra: ``pip install -e '.[packaging]'``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPEC = HERE / "pyinstaller" / "ferrum-desktop.spec"
DIST = HERE / "dist"
WORK = HERE / "build"
EXE_SUFFIX = ".exe" if sys.platform == "win32" else ""


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
    """Both programs start from the bundle: the CLI prints its help and lists the bundled models, the GUI
    shows its window (offscreen) and quits."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    checks = [
        [str(folder / f"ferrum{EXE_SUFFIX}"), "--help"],
        [str(folder / f"ferrum{EXE_SUFFIX}"), "models"],
        [str(folder / f"ferrum-gui{EXE_SUFFIX}"), "--quit-after-show"],
    ]
    for cmd in checks:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        print(f"$ {' '.join(Path(cmd[0]).name if i == 0 else c for i, c in enumerate(cmd))}  -> rc {done.returncode}")
        print((done.stdout + done.stderr).strip()[-1500:])
        if done.returncode != 0:
            raise SystemExit(f"smoke test failed: {cmd}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--multilingual", action="store_true", help="also bundle Whisper base (multilingual extra)")
    parser.add_argument("--no-smoke", action="store_true", help="skip starting the built programs")
    parser.add_argument("--clean", action="store_true", help="empty PyInstaller's cache first")
    args = parser.parse_args(argv)
    folder = build(args.multilingual, args.clean)
    if not args.no_smoke:
        smoke(folder)
    print(f"{folder}: {folder_bytes(folder) / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
