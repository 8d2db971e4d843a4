"""Speech the transcript heard: DER of the meeting excerpts with and without Whisper's words as speech evidence.

Per file and pooled (total error over total reference time), DER as in ``bench/diarize.py``. Columns:
before (no words, quiet stretches to the nearest speaker in time: the pipeline before issue 27),
no words (voice prints for long quiet stretches), words + nearest (words, no voice prints), and words
(what ``transcribe --diarize`` runs). The transcripts are those of ``ferrum transcribe`` (``FERRUM_EVAL_DIR``:
the evaluation sets' folder, as ``bench/eval_data.py`` resolves it):

    HF_HUB_OFFLINE=1 .venv/bin/ferrum transcribe "$FERRUM_EVAL_DIR"/diarization-dev/*.flac --word-timestamps \\
        --format json -o /tmp/dev_json --no-history
    HF_HUB_OFFLINE=1 .venv/bin/python bench/diarize_words.py /tmp/dev_json [--quiet-turns]

``--quiet-turns`` also measures where a stretch only the words hold should go: two-voice conversations
joined from tests/data's clips with one turn 50 dB down (the VAD and the network drop it) and that turn
given as heard; the share of it that goes to its own voice, by voice print and by nearest speaker in time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.diarize import der, meetings  # noqa: E402

PARTS = ("missed detection", "false alarm", "confusion")


def run(audio, words, min_print_s: float):
    from executors.diarization import diarize, heard

    kept, heard.MIN_PRINT_S = heard.MIN_PRINT_S, min_print_s
    try:
        return [(t.start, t.end, t.speaker) for t in diarize(audio, heard=words).turns]
    finally:
        heard.MIN_PRINT_S = kept


def quiet_turns() -> None:
    from bench.conversations import conversation

    data = Path(__file__).resolve().parents[1] / "tests" / "data" / "speech"
    shares: dict[str, list[float]] = {"voice print": [], "nearest in time": []}
    for seed in (1, 2, 3, 4):
        conv = conversation(["asterisk", "librivox"], n_turns=6, seed=seed, root=data)
        for k in (2, 3):
            start, end, voice = conv.turns[k]
            audio = conv.audio.copy()
            audio[int(start * 16000):int(end * 16000)] *= 10 ** (-50 / 20)
            for config, min_print_s in (("voice print", 1.0), ("nearest in time", float("inf"))):
                hyp = run(audio, [(start, end)], min_print_s)
                own = _major(hyp, [(s, e) for i, (s, e, v) in enumerate(conv.turns) if v == voice and i != k])
                share = _cover(hyp, start, end).get(own, 0.0) / (end - start)
                shares[config].append(share)
                print(f"seed {seed} turn {k} ({end - start:.1f} s) {config}: {100 * share:.0f} % to its own voice")
    for config, values in shares.items():
        print(f"{config}: {100 * sum(values) / len(values):.0f} % of the quiet turns to their own voice")


def _cover(hyp, start: float, end: float) -> dict[str, float]:
    out: dict[str, float] = {}
    for s, e, who in hyp:
        if min(end, e) > max(start, s):
            out[who] = out.get(who, 0.0) + min(end, e) - max(start, s)
    return out


def _major(hyp, spans) -> str:
    totals: dict[str, float] = {}
    for start, end in spans:
        for who, seconds in _cover(hyp, start, end).items():
            totals[who] = totals.get(who, 0.0) + seconds
    return max(totals, key=totals.get)


def main() -> None:
    from executors.diarization import heard, transcript_speech
    from executors.transcripts.exporters import transcript_from_json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transcripts", type=Path, help="folder of <file>.json from ferrum transcribe --format json")
    parser.add_argument("--quiet-turns", action="store_true", help="also the voice print against nearest in time")
    args = parser.parse_args()
    if args.quiet_turns:
        quiet_turns()
    configs = {"before": (False, float("inf")), "no words": (False, heard.MIN_PRINT_S),
               "words + nearest": (True, float("inf")), "words": (True, heard.MIN_PRINT_S)}
    pooled = {name: {"total": 0.0, **{p: 0.0 for p in PARTS}} for name in configs}
    print(f"{'file':<24}" + "".join(f"{name:>17}" for name in configs) + "   (DER %)")
    for name, audio, reference, duration in meetings():
        transcript = transcript_from_json((args.transcripts / f"{name}.json").read_text(encoding="utf-8"))
        words = transcript_speech(transcript)
        row = []
        for config, (use_words, min_print_s) in configs.items():
            score = der(reference, run(audio, words if use_words else (), min_print_s), duration)
            for key in pooled[config]:
                pooled[config][key] += score[key]
            row.append(100 * score["diarization error rate"])
        print(f"{name:<24}" + "".join(f"{v:>17.1f}" for v in row), flush=True)
    print(f"{'pooled':<24}" + "".join(f"{100 * sum(p[k] for k in PARTS) / p['total']:>17.1f}"
                                      for p in pooled.values()))
    for config, p in pooled.items():
        print(f"  {config}: " + ", ".join(f"{k} {p[k]:.1f} s" for k in PARTS) + f" of {p['total']:.1f} s")


if __name__ == "__main__":
    main()
