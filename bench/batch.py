"""``ferrum batch --cluster local`` against the single-process ``ferrum transcribe`` on the same files.

Both run as whole processes (`nice`d), interleaved, each writing JSON transcripts of the same
speech-dev clips on the same number of CPUs: the single process with --threads N, the local cluster
with --local-cpus N and its own worker plan (N one-thread workers; --ray-threads T gives N/T workers
of T threads). Per run:
- whole process: start to the last file written (Ray's start-up and the model load included);
- steady state: seconds per file after the first output (or first batch of outputs) was written,
  read from the outputs' modification times; start-up is excluded.
Overhead = Ray's steady-state seconds per file / the single process's - 1 (medians). Both get the
same --batch-size (default 1, the default of `ferrum batch`). Keep it at 1 for the steady-state
figure: with larger batches Ray Data may hold a finished batch's rows back until the next one is
done, so the outputs' times no longer say when each file was transcribed.
Then: how many files' text is identical between the two (per subset; files where Whisper fell back
to sampling at a temperature above 0 are random in both and counted apart), and a rerun over the
Ray output folder (it must redo nothing). The N-node figure is arithmetic, stated as such.

    nice .venv/bin/python bench/batch.py --clips 80 --threads 2 --reps 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import dev_slice, format_table, interleaved, median  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FERRUM = [sys.executable, "-m", "ferrum_cli.main"]
SUMMARY = "ferrum-batch-summary.json"
BURST_S = 0.1  # outputs written less than this apart came from one batch


def _duration(path: Path) -> float:
    import soundfile as sf

    return sf.info(str(path)).duration


def _outputs(out: Path) -> dict[str, Path]:
    return {p.stem: p for p in out.rglob("*.json") if p.name != SUMMARY}


def _run(cmd: list[str], out: Path) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    t0 = time.time()
    proc = subprocess.run(["nice", "-n", "10", *cmd], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    wall = time.time() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed:\n{proc.stderr[-3000:]}")
    stamps = sorted(p.stat().st_mtime for p in _outputs(out).values())
    # Files come out in bursts (a batch of N files is written together): the steady rate counts the
    # files after the first burst, over the time from its end to the last file.
    first = 1
    while first < len(stamps) and stamps[first] - stamps[first - 1] < BURST_S:
        first += 1
    return {"wall": wall, "first": stamps[0] - t0, "files": len(stamps),
            "per_file": (stamps[-1] - stamps[first - 1]) / max(1, len(stamps) - first)}


def _greedy_text(path: Path) -> tuple[str, bool]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc["text"], all(s["temperature"] == 0 for s in doc["segments"])


def compare(single: Path, ray: Path, subsets: dict[str, str]) -> list[list[str]]:
    a, b = _outputs(single), _outputs(ray)
    rows = []
    for subset in sorted(set(subsets.values())) + ["all"]:
        stems = [s for s in a if subset == "all" or subsets.get(s) == subset]
        same = sum(_greedy_text(a[s])[0] == _greedy_text(b[s])[0] for s in stems if s in b)
        greedy = [s for s in stems if s in b and _greedy_text(a[s])[1] and _greedy_text(b[s])[1]]
        same_greedy = sum(_greedy_text(a[s])[0] == _greedy_text(b[s])[0] for s in greedy)
        rows.append([subset, f"{len(stems)}", f"{len(b.keys() & set(stems))}", f"{same}/{len(stems)} "
                     f"({100 * same / max(1, len(stems)):.1f} %)", f"{same_greedy}/{len(greedy)}"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", type=int, default=40)
    ap.add_argument("--threads", type=int, default=2,
                    help="CPUs of both: the single process's threads, the local cluster's --local-cpus")
    ap.add_argument("--ray-threads", type=int, default=None,
                    help="threads per Ray worker (default: ferrum batch's own plan, one-thread workers)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=1, help="files decoded together, the same for both")
    ap.add_argument("--nodes", default="4,16,64", help="node counts for the (arithmetic) cluster figure")
    args = ap.parse_args()

    clips = dev_slice(args.clips)
    audio = sum(_duration(u.path) for u in clips)
    subsets = {u.path.stem: u.path.parent.name for u in clips}
    work = Path(tempfile.mkdtemp(prefix="ferrum-bench-batch-"))
    listing = work / "clips.lst"
    listing.write_text("".join(f"{u.path}\n" for u in clips), encoding="utf-8")
    common = ["--format", "json", "--batch-size", str(args.batch_size), "--quiet"]
    ray_args = ["--local-cpus", str(args.threads), *(["--threads", str(args.ray_threads)] if args.ray_threads else [])]
    runs: dict[str, list[dict]] = {"single process": [], "ray local": []}
    engines = {
        "single process": lambda: _run([*FERRUM, "transcribe", *(str(u.path) for u in clips), "-o",
                                        str(work / "single"), "--threads", str(args.threads), *common], work / "single"),
        "ray local": lambda: _run([*FERRUM, "batch", str(listing), "-o", str(work / "ray"), "--cluster", "local",
                                   *ray_args, *common], work / "ray"),
    }
    print(f"{len(clips)} clips, {audio:.1f} s of audio; {args.threads} threads; {args.reps} reps, interleaved, nice",
          flush=True)
    interleaved(engines, args.reps, on_result=lambda name, rep, dt, r: (
        runs[name].append(r), print(f"  {name} rep {rep}: whole {r['wall']:.1f} s, steady {r['per_file']:.3f} s/file "
                                    f"({r['files']} files)", flush=True)))

    n = len(clips)
    table, per_file = [], {}
    mean_audio = audio / n
    for name, rs in runs.items():
        wall, first, each = (median(r[k] for r in rs) for k in ("wall", "first", "per_file"))
        per_file[name] = each
        table.append([name, f"{wall:.1f}", f"{first:.1f}", f"{each:.3f}", f"{1 / each:.2f}",
                      f"{mean_audio / each:.1f}", f"{n / wall:.2f}", f"{audio / wall:.1f}"])
    print()
    print(format_table(["engine", "whole s", "first file s", "steady s/file", "files/s", "audio-h/h",
                        "files/s whole", "audio-h/h whole"], table))
    overhead = per_file["ray local"] / per_file["single process"] - 1
    whole = median(r["wall"] for r in runs["ray local"]) / median(r["wall"] for r in runs["single process"]) - 1
    print(f"\nRay overhead at {args.threads} CPUs: steady state {100 * overhead:+.1f} %, whole process {100 * whole:+.1f} %")

    print("\nSame text as the single-process CLI (last rep):")
    print(format_table(["subset", "files", "written", "identical text", "identical, both greedy"],
                       compare(work / "single", work / "ray", subsets)))

    t0 = time.time()
    proc = subprocess.run([*FERRUM, "batch", str(listing), "-o", str(work / "ray"), *ray_args, *common],
                          cwd=ROOT, capture_output=True, text=True)
    saved = json.loads((work / "ray" / SUMMARY).read_text(encoding="utf-8"))
    print(f"\nRerun over the same output folder: {saved['written']} written, {saved['skipped']} already done, "
          f"{time.time() - t0:.1f} s (exit {proc.returncode})")

    rate = mean_audio / per_file["ray local"]  # audio seconds per second, one node
    start = median(r["first"] for r in runs["ray local"])
    print(f"\nOn N such nodes (arithmetic, not measured): N x {rate:.1f} audio-h/h at steady state, "
          f"plus ~{start:.0f} s of start-up once (Ray + one model load per worker, in parallel):")
    for nodes in (int(x) for x in args.nodes.split(",")):
        print(f"  {nodes:>3} nodes: {nodes * rate:.1f} audio-h/h; 1,000 h of audio in {1000 / (nodes * rate):.1f} h")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
