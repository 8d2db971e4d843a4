"""Speaker diarization, ours next to senko's pipeline (bench/senko_peer.py) on the same audio: DER per file
with speaker counts, pooled DER (total error over total reference time) and the share of files with the
right speaker count per set, on the meeting excerpts (diarization-dev), conversations joined from
speech-dev voices and conversations joined from speech-wide voices (bench/conversations.py); and speed.

DER is pyannote.metrics' DiarizationErrorRate with a 0.25 s collar and overlapping speech scored
(a second voice we do not label counts as missed). Next to ours, in the same run: "one speaker"
(all the speech our pipeline detects given to one speaker) and, on the meetings, one speaker over the
reference's own speech (perfect detection, the 30.5 % the issue quotes) and the reference's own
speakers over the speech we detect (perfect attribution, overlap included: the best any clustering
could do on top of our speech detection).
Speed: real-time factor of ``diarize`` at the given thread count, next to the transcription it rides
on (tiny.en, with and without the word timestamps that speaker re-segmentation uses), medians of
interleaved runs.

    .venv/bin/python bench/diarize.py [--threads 1] [--seeds 6] [--wide-seeds 12] [--wide-first 0] [--reps 3]
        [--skip-speed] [--sets meetings,speech-dev,speech-wide]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.conversations import Conversation, conversation_set, wide_set  # noqa: E402
from bench.eval_data import eval_path  # noqa: E402

COLLAR = 0.25


def annotation(turns):
    from pyannote.core import Annotation, Segment

    ann = Annotation()
    for n, (start, end, who) in enumerate(turns):
        if end > start:
            ann[Segment(start, end), n] = who
    return ann


def der(reference, hypothesis, duration: float) -> dict:
    from pyannote.core import Segment, Timeline
    from pyannote.metrics.diarization import DiarizationErrorRate

    metric = DiarizationErrorRate(collar=COLLAR, skip_overlap=False)
    return metric(annotation(reference), annotation(hypothesis), uem=Timeline([Segment(0, duration)]), detailed=True)


def meetings(folder: Path | None = None) -> list[tuple[str, Path, list, float]]:
    """The meeting excerpts of ``folder`` (default: diarization-dev of the evaluation sets)."""
    from executors.transcripts.rttm import parse_rttm

    out = []
    for rttm in sorted((folder or eval_path("diarization-dev")).glob("*.rttm")):
        turns = next(iter(parse_rttm(rttm.read_text(encoding="utf-8")).values()))
        start, end = map(float, (rttm.with_suffix(".uem").read_text().split()[2:4]))
        out.append((rttm.stem, rttm.with_suffix(".flac"), turns, end - start))
    return out


def ours(audio):
    from executors.diarization import diarize

    d = diarize(audio)
    return [(t.start, t.end, t.speaker) for t in d.turns], d


def reference_on(reference, spans):
    """The reference turns cut to ``spans``: every detected second attributed perfectly."""
    from pyannote.core import Segment, Timeline

    kept = annotation(reference).crop(Timeline([Segment(s, e) for s, e in spans]).support(), mode="intersection")
    return [(seg.start, seg.end, who) for seg, _, who in kept.itertracks(yield_label=True)]


def one_speaker(spans):
    return [(s, e, "A") for s, e in spans]


@dataclass
class Scored:
    name: str
    n_ref: int
    ours: dict
    n_ours: int
    peer: dict
    n_peer: int
    one_speaker: dict


def _errors(m: dict) -> float:
    return m["missed detection"] + m["false alarm"] + m["confusion"]


def score(name: str, audio: np.ndarray, reference, duration: float) -> tuple[Scored, object]:
    """Ours and senko on one file, and one speaker over the speech we detect; with our Diarization."""
    from bench.senko_peer import senko_turns

    hyp, d = ours(audio)
    peer = senko_turns(audio)
    return Scored(name, len({t[2] for t in reference}), der(reference, hyp, duration), len(d.speakers),
                  der(reference, peer, duration), len({t[2] for t in peer}),
                  der(reference, one_speaker(d.speech), duration)), d


def _header(label: str, first: str, extra: str = "") -> None:
    print(f"\n{label}: DER %, our seconds missed / false alarm / confusion; speaker counts")
    print(f"{first:32s} ref ours     DER   miss     FA  conf.  senko    DER   1-spk{extra}")


def _row(r: Scored, extra: str = "") -> None:
    m = r.ours
    print(f"{r.name:32s} {r.n_ref:>3d} {r.n_ours:>4d}  {m['diarization error rate']*100:6.1f} "
          f"{m['missed detection']:6.2f} {m['false alarm']:6.2f} {m['confusion']:6.2f}  {r.n_peer:>5d} "
          f"{r.peer['diarization error rate']*100:6.1f}  {r.one_speaker['diarization error rate']*100:6.1f}{extra}")


def _pooled(metrics: list[dict]) -> float:
    return sum(_errors(m) for m in metrics) / sum(m["total"] for m in metrics) * 100


def _summary(label: str, rows: list[Scored]) -> None:
    n = len(rows)
    for engine, metrics, counts in (("ours ", [r.ours for r in rows], [r.n_ours for r in rows]),
                                    ("senko", [r.peer for r in rows], [r.n_peer for r in rows])):
        mean = statistics.mean(m["diarization error rate"] for m in metrics) * 100
        right = sum(c == r.n_ref for c, r in zip(counts, rows))
        print(f"{label} {engine}: pooled DER {_pooled(metrics):5.1f} % (mean {mean:5.1f} %), "
              f"speaker count right {right}/{n} ({right / n * 100:.0f} %)")
    print(f"{label} one speaker over our speech: pooled DER {_pooled([r.one_speaker for r in rows]):5.1f} %")


def bench_meetings() -> None:
    from bench.common import read_audio

    _header("Meeting excerpts (diarization-dev)", "file", "  perfect-VAD 1-spk  perfect speakers")
    rows, ideal, attributed = [], [], []
    for name, flac, ref, duration in meetings():
        r, d = score(name, read_audio(flac), ref, duration)
        ideal.append(der(ref, one_speaker([(s.start, s.end) for s in annotation(ref).get_timeline().support()]),
                         duration))
        attributed.append(der(ref, reference_on(ref, d.speech), duration))
        rows.append(r)
        _row(r, f"  {ideal[-1]['diarization error rate']*100:6.1f}             "
                f"{attributed[-1]['diarization error rate']*100:6.1f}")
    _summary("meetings", rows)
    print(f"meetings: one speaker over the reference speech (perfect detection): pooled {_pooled(ideal):.1f} %")
    print(f"meetings: the reference's speakers over our speech detection (perfect attribution): pooled "
          f"{_pooled(attributed):.1f} %")


def bench_conversations(label: str, convs: list[Conversation]) -> None:
    _header(label, "conversation")
    rows = []
    for conv in convs:
        r, _ = score(conv.name, conv.audio, conv.turns, conv.duration)
        rows.append(r)
        _row(r)
    _summary(label.split(" ")[0].lower() + " conversations", rows)


def bench_speed(threads: int, reps: int) -> None:
    import torch

    from executors.diarization import diarize
    from executors.models.store import DEFAULT_WHISPER, resolve_model
    from executors.whisper import WhisperModelExecutor
    from executors.whisper.options import TranscribeOptions

    torch.set_num_threads(threads)
    files = [m[1] for m in meetings()]
    audio_s = 30.0 * len(files)
    whisper = WhisperModelExecutor.from_path(resolve_model(DEFAULT_WHISPER).path, device="cpu", threads=threads)
    jobs = {
        "diarize": lambda f: diarize(f),
        "transcribe": lambda f: whisper.transcribe(f, TranscribeOptions(language="en")),
        "transcribe+words": lambda f: whisper.transcribe(f, TranscribeOptions(language="en", word_timestamps=True)),
    }
    diarize(files[0])  # loads the networks and the VAD
    times: dict[str, list[float]] = {k: [] for k in jobs}
    for _ in range(reps):
        for name, job in jobs.items():  # interleaved, so machine noise hits every job alike
            t0 = time.perf_counter()
            for f in files:
                job(f)
            times[name].append(time.perf_counter() - t0)
    rtf = {k: statistics.median(v) / audio_s for k, v in times.items()}
    print(f"\nSpeed, {len(files)} meeting excerpts ({audio_s:.0f} s), {threads} thread(s), median of {reps}:")
    for name, value in rtf.items():
        print(f"  {name:18s} RTF {value:.4f}")
    extra = rtf["diarize"] + rtf["transcribe+words"] - rtf["transcribe"]
    print(f"  speakers on top of plain transcription (diarize + word timestamps): {extra:.4f} x real time")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=6, help="speech-dev conversations per voice set")
    ap.add_argument("--wide-seeds", type=int, default=12, help="speech-wide conversations")
    ap.add_argument("--wide-first", type=int, default=0,
                    help="seed of the first speech-wide conversation (24: those no setting was chosen on)")
    ap.add_argument("--sets", default="meetings,speech-dev,speech-wide", type=lambda v: v.split(","),
                    help="comma-separated: meetings, speech-dev, speech-wide")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--skip-speed", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    if "meetings" in args.sets:
        bench_meetings()
    if "speech-dev" in args.sets:
        bench_conversations("Speech-dev conversations (asterisk, librivox, cards; 12 turns each)",
                            conversation_set(range(args.seeds)))
    if "speech-wide" in args.sets:
        bench_conversations("Speech-wide conversations (2-4 voices of LibriSpeech, AN4, VCTK; one voice "
                            "recorded several times)",
                            wide_set(range(args.wide_first, args.wide_first + args.wide_seeds)))
    if not args.skip_speed:
        bench_speed(args.threads, args.reps)


if __name__ == "__main__":
    main()
