"""Speaker diarization: DER per file on the meeting excerpts and on joined clean conversations, and speed.

DER is pyannote.metrics' DiarizationErrorRate with a 0.25 s collar and overlapping speech scored
(a second voice we do not label counts as missed). Next to ours, in the same run: "one speaker"
(all the speech our pipeline detects given to one speaker) and, on the meetings, one speaker over the
reference's own speech (perfect detection, the 30.5 % the issue quotes) and the reference's own
speakers over the speech we detect (perfect attribution, overlap included: the best any clustering
could do on top of our speech detection).
Speed: real-time factor of ``diarize`` at the given thread count, next to the transcription it rides
on (tiny.en, with and without the word timestamps that speaker re-segmentation uses), medians of
interleaved runs.

    .venv/bin/python bench/diarize.py [--threads 1] [--seeds 6] [--reps 3] [--skip-speed]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.conversations import Conversation, conversation_set  # noqa: E402
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


def _row(name, n_ref, n_hyp, mine, base, extra=""):
    print(f"{name:32s} {n_ref:>3d} {n_hyp:>3d}  {mine['diarization error rate']*100:6.1f} "
          f"{mine['missed detection']:6.2f} {mine['false alarm']:6.2f} {mine['confusion']:6.2f}  "
          f"{base['diarization error rate']*100:6.1f}{extra}")


def _summary(label, rows):
    mean = statistics.mean(r[0]["diarization error rate"] for r in rows) * 100
    pooled = sum(r[0]["missed detection"] + r[0]["false alarm"] + r[0]["confusion"] for r in rows) / \
        sum(r[0]["total"] for r in rows) * 100
    base = statistics.mean(r[1]["diarization error rate"] for r in rows) * 100
    print(f"{label}: mean DER {mean:.1f} % (pooled {pooled:.1f} %); one speaker over our speech detection: mean {base:.1f} %")
    return mean


def bench_meetings() -> None:
    print("\nMeeting excerpts (diarization-dev): DER %, seconds missed / false alarm / confusion")
    print(f"{'file':32s} ref hyp     DER   miss     FA  conf.   1-spk  perfect-VAD 1-spk  perfect speakers")
    rows = []
    for name, flac, ref, duration in meetings():
        hyp, d = ours(flac)
        mine, base = der(ref, hyp, duration), der(ref, one_speaker(d.speech), duration)
        ideal = der(ref, one_speaker([(s.start, s.end) for s in annotation(ref).get_timeline().support()]), duration)
        attributed = der(ref, reference_on(ref, d.speech), duration)
        rows.append((mine, base, ideal, attributed))
        _row(name, len({t[2] for t in ref}), len(d.speakers), mine, base,
             f"  {ideal['diarization error rate']*100:6.1f}             {attributed['diarization error rate']*100:6.1f}")
    _summary("meetings", rows)
    print(f"meetings: one speaker over the reference speech (perfect detection): mean "
          f"{statistics.mean(r[2]['diarization error rate'] for r in rows)*100:.1f} %")
    print(f"meetings: the reference's speakers over our speech detection (perfect attribution): mean "
          f"{statistics.mean(r[3]['diarization error rate'] for r in rows)*100:.1f} %")


def bench_conversations(seeds: int) -> None:
    print("\nJoined clean conversations (speech-dev voices: asterisk, librivox, cards; 12 turns each)")
    print(f"{'conversation':32s} ref hyp     DER   miss     FA  conf.   1-spk")
    rows, right = [], 0
    convs: list[Conversation] = conversation_set(range(seeds))
    for conv in convs:
        hyp, d = ours(conv.audio)
        mine, base = der(conv.turns, hyp, conv.duration), der(conv.turns, one_speaker(d.speech), conv.duration)
        rows.append((mine, base))
        right += len(d.speakers) == len(conv.voices)
        _row(conv.name, len(conv.voices), len(d.speakers), mine, base)
    _summary("conversations", rows)
    print(f"conversations: right speaker count in {right}/{len(convs)}")


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
    ap.add_argument("--seeds", type=int, default=6, help="conversations per voice set")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--skip-speed", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    bench_meetings()
    bench_conversations(args.seeds)
    if not args.skip_speed:
        bench_speed(args.threads, args.reps)


if __name__ == "__main__":
    main()
