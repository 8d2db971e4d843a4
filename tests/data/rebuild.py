"""Rebuild tests/data from the evaluation sets (how every file here was made; see README.md).

    python tests/data/rebuild.py          # needs the evaluation sets (bench/eval_data.py finds them)

Clips and texts are copied byte for byte; only ``speech/long/asterisk-60s.flac`` is new: other
telephone prompts of the same voice joined with short silences, its reference and clip offsets beside it.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from bench.eval_data import eval_path  # noqa: E402

RATE = 16000
ASTERISK_CLIPS = 34          # evenly spaced over the 276 prompts: sentences, digits, dates, letters
# named by existing tests (test_api, test_whisper_contract) or giving the first rows a sentence with "agent" (test_indexer)
ASTERISK_REQUIRED = ("asterisk/agent-alreadyon.flac", "asterisk/agent-newlocation.flac",
                     "asterisk/confbridge-invalid.flac", "asterisk/dir-welcome.flac")
LONG_SECONDS = 60.0
LONG_GAP_S = 0.6
LONG_MIN_WORDS = 6           # whole sentences only
LONG_MAX_CLIP_S = 8.0
DIARIZATION = ("pyannote-audio__trn08",)   # 4 speakers, many short turns, no annotation caveat in its index


def _rows(speech_dev: Path) -> list[tuple[str, str]]:
    lines = (speech_dev / "transcripts.tsv").read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t", 1)) for line in lines[1:] if line.strip()]


def _evenly(items: list, count: int) -> list:
    return [items[(i * len(items)) // count] for i in range(count)] if count < len(items) else list(items)


def pick_clips(rows: list[tuple[str, str]]) -> set[str]:
    asterisk = sorted(p for p, _ in rows if p.startswith("asterisk/"))
    picked = set(_evenly(asterisk, ASTERISK_CLIPS)) | set(ASTERISK_REQUIRED)
    return picked | {p for p, _ in rows if p.startswith("pocketsphinx/")}


def write_speech(speech_dev: Path, out: Path) -> set[str]:
    rows = _rows(speech_dev)
    picked = pick_clips(rows)
    lines = ["path\treference"]
    for rel, ref in rows:  # the source's order, so "the first n rows" stays meaningful
        if rel in picked:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(speech_dev / rel, out / rel)
            lines.append(f"{rel}\t{ref}")
    (out / "transcripts.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return picked


def write_long(speech_dev: Path, out: Path, exclude: set[str]) -> None:
    """About a minute of whole telephone-prompt sentences (spread over the set, none among the short clips)."""
    rows = sorted((p, r.strip()) for p, r in _rows(speech_dev) if p.startswith("asterisk/") and p not in exclude
                  and len(r.split()) >= LONG_MIN_WORDS and sf.info(str(speech_dev / p)).duration <= LONG_MAX_CLIP_S)
    seconds = lambda chosen: sum(sf.info(str(speech_dev / p)).duration + LONG_GAP_S for p, _ in chosen)  # noqa: E731
    chosen = next(_evenly(rows, n) for n in range(1, len(rows) + 1) if seconds(_evenly(rows, n)) >= LONG_SECONDS)
    gap = np.zeros(int(LONG_GAP_S * RATE), np.float32)
    parts, table, at = [gap], ["start\tend\tsource\treference"], len(gap)
    for rel, ref in chosen:
        audio, rate = sf.read(str(speech_dev / rel), dtype="float32")
        assert rate == RATE and audio.ndim == 1
        table.append(f"{at / RATE:.3f}\t{(at + len(audio)) / RATE:.3f}\t{rel}\t{ref}")
        parts += [audio, gap]
        at += len(audio) + len(gap)
    long_dir = out / "long"
    long_dir.mkdir(parents=True, exist_ok=True)
    sf.write(str(long_dir / "asterisk-60s.flac"), np.concatenate(parts), RATE, format="FLAC", subtype="PCM_16")
    (long_dir / "asterisk-60s.tsv").write_text("\n".join(table) + "\n", encoding="utf-8")


def main() -> int:
    speech_dev = eval_path("speech-dev")
    for sub in ("speech", "text", "diarization"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
    picked = write_speech(speech_dev, HERE / "speech")
    write_long(speech_dev, HERE / "speech", picked)
    (HERE / "text").mkdir()
    shutil.copyfile(eval_path("text-dev", "newsgroups_mini.jsonl"), HERE / "text" / "newsgroups_mini.jsonl")
    (HERE / "diarization").mkdir()
    for name in DIARIZATION:
        for ext in ("flac", "rttm", "uem"):
            shutil.copyfile(eval_path("diarization-dev", f"{name}.{ext}"), HERE / "diarization" / f"{name}.{ext}")
    total = sum(p.stat().st_size for p in HERE.rglob("*") if p.is_file())
    print(f"tests/data: {total / 2**20:.2f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
