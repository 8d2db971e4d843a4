"""``ferrum batch`` on a real local Ray cluster, the bundled tiny.en and real speech (no mocks).

One loopback-only cluster of 2 CPUs serves the whole module; it is stopped at the end and no
Ray process may outlive it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest
from audio_fixtures import SPEECH_DIR

from executors.batch import BatchOptions, run_batch
from executors.batch.sources import SUMMARY_NAME
from executors.whisper.options import TranscribeOptions
from ferrum_cli.main import main

CLIPS = [SPEECH_DIR / "asterisk" / n for n in (
    "activated.flac", "agent-alreadyon.flac", "call-fwd-no-ans.flac", "agent-newlocation.flac",
    "conf-getchannel.flac", "vm-newpassword.flac")] + [
    SPEECH_DIR / "pocketsphinx" / "goforward.flac",
    SPEECH_DIR / "pocketsphinx" / "librivox_sense_and_sensibility_01_austen_64kb-0870.flac"]
THREADS = 2


# ---------------------------------------------------------------- Ray processes of this test run

def _descendants(root: int) -> dict[int, str]:
    """pid -> process name of every live process below ``root``."""
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        names[int(entry.name)] = name
    found, todo = {}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found[child] = names[child]
            todo.append(child)
    return found


def _listening_addresses(pids) -> set[str]:
    """Local addresses of the TCP sockets the processes ``pids`` listen on."""
    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A" and cols[9] in inodes:  # 0A = LISTEN
                found.add(cols[1].rsplit(":", 1)[0])
    return found


LOOPBACK = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster (2 CPUs) for the module; afterwards no Ray process may be left."""
    from executors.batch.cluster import ray_cluster

    temp = tempfile.mkdtemp(prefix="fr-ray-", dir="/tmp")
    try:
        with ray_cluster("local", num_cpus=2, temp_dir=temp) as info:
            yield info
        deadline = time.monotonic() + 30
        while (left := {p: n for p, n in _descendants(os.getpid()).items()
                        if "ray" in n or n in ("gcs_server", "raylet")}) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not left, f"Ray processes outlived the cluster: {left}"
    finally:
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """The clips in a folder tree (one in a subfolder) plus a file that is not audio at all."""
    root = tmp_path_factory.mktemp("archive")
    (root / "day2").mkdir()
    for i, clip in enumerate(CLIPS):
        shutil.copy(clip, (root / "day2" if i == len(CLIPS) - 1 else root) / clip.name)
    (root / "broken.wav").write_bytes(os.urandom(6000))
    return root


@pytest.fixture(scope="module")
def reference(archive, tmp_path_factory):
    """What the single-process ``ferrum transcribe`` writes for the same clips and options."""
    out = tmp_path_factory.mktemp("single")
    clips = sorted(p for p in archive.rglob("*.flac"))
    # --batch-size 1 as the batch run below (BatchOptions' default): windows decoded together may place a
    # segment boundary differently (float32 sums in another order), the text stays the same
    assert main(["transcribe", *map(str, clips), "--output-dir", str(out), "--threads", str(THREADS), "--quiet",
                 "--format", "json", "--batch-size", "1", "--no-history"]) == 0
    return _outputs(out)


def _options(out: Path, **kw) -> BatchOptions:
    """The default worker plan (on the 2-CPU cluster: two one-thread workers), JSON outputs."""
    return BatchOptions(output_dir=out, **{"fmt": "json", **kw})


@pytest.fixture(scope="module")
def first_run(cluster, archive, tmp_path_factory):
    out = tmp_path_factory.mktemp("batch")
    seen = []
    summary = run_batch([str(archive)], _options(out), on_progress=seen.append)
    return out, summary, seen


def _outputs(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in out.rglob("*.json") if p.name != SUMMARY_NAME}


def _timed_text(doc: dict) -> list[tuple] | None:
    """The segments' times and text when every window decoded greedily; None when one fell back
    to sampling at a temperature above 0, which is random by design (two runs of the same
    process differ there too)."""
    if any(seg["temperature"] > 0 for seg in doc["segments"]):
        return None
    return [(seg["start"], seg["end"], seg["text"]) for seg in doc["segments"]]


def _assert_same_as_reference(written: dict, reference: dict) -> None:
    assert sorted(written) == sorted(reference)
    compared = [stem for stem in reference if _timed_text(reference[stem]) and _timed_text(written[stem])]
    assert len(compared) >= len(reference) - 2, "too few greedy transcripts to compare"
    assert {s: _timed_text(written[s]) for s in compared} == {s: _timed_text(reference[s]) for s in compared}


# ---------------------------------------------------------------- tests

def test_local_cluster_listens_on_loopback_only(cluster):
    assert cluster.started_here and cluster.node_ip == "127.0.0.1" and cluster.cpus == 2
    addresses = _listening_addresses(_descendants(os.getpid()))
    assert addresses, "found no listening Ray sockets to check"
    assert addresses <= LOOPBACK, f"Ray listens beyond the loopback address: {addresses - LOOPBACK}"


def test_outputs_equal_the_single_process_cli(first_run, reference):
    out, summary, _ = first_run
    assert (out / "day2" / f"{CLIPS[-1].stem}.json").is_file()  # the folder tree is mirrored
    _assert_same_as_reference(_outputs(out), reference)
    assert summary.written == len(CLIPS) and summary.skipped == 0
    assert summary.audio_seconds == pytest.approx(sum(_duration(c) for c in CLIPS), abs=0.01)


def _duration(path: Path) -> float:
    import soundfile as sf

    return sf.info(str(path)).duration


def test_a_corrupt_file_is_reported_and_the_rest_finish(first_run, archive):
    out, summary, seen = first_run
    assert [f["source"] for f in summary.failed] == [str(archive / "broken.wav")]
    assert "Cannot decode" in summary.failed[0]["error"]
    assert not summary.ok and len(_outputs(out)) == len(CLIPS)
    saved = json.loads((out / SUMMARY_NAME).read_text(encoding="utf-8"))
    assert saved["failed"] == summary.failed and saved["written"] == len(CLIPS)
    # progress: once at the start, then once per file, counting up to every file
    assert [p.files_done for p in seen] == list(range(len(CLIPS) + 2))
    assert seen[-1].files_total == len(CLIPS) + 1 and seen[-1].files_failed == 1
    assert seen[-1].audio_done_s == pytest.approx(summary.audio_seconds)
    assert {p.last.status for p in seen[1:]} == {"written", "failed"}


def test_a_rerun_redoes_nothing(first_run, archive):
    out, _, _ = first_run
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.json") if p.name != SUMMARY_NAME}
    summary = run_batch([str(archive)], _options(out))
    assert summary.written == 0 and summary.skipped == len(CLIPS)
    assert [f["source"] for f in summary.failed] == [str(archive / "broken.wav")]  # tried again, still broken
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.json") if p.name != SUMMARY_NAME} == before


@pytest.mark.slow  # a second full run after killing a worker
def test_a_killed_worker_costs_only_its_files_which_are_retried(cluster, archive, reference, tmp_path):
    killed, workers = [], []

    def kill_first_worker(progress):
        last = progress.last
        if last is not None and last.status == "written":
            workers.append(last.worker_pid)
            if not killed:
                os.kill(last.worker_pid, signal.SIGKILL)  # it is busy with the next files
                killed.append(last.worker_pid)

    # one worker: every file after the kill has to come from the worker Ray restarts
    summary = run_batch([str(archive)], _options(tmp_path, workers=1), on_progress=kill_first_worker)
    assert killed and workers[0] == killed[0]
    assert set(workers) - set(killed)  # files finished after the kill came from a restarted worker
    assert summary.written == len(CLIPS), summary.failed
    _assert_same_as_reference(_outputs(tmp_path), reference)
    assert [f["source"] for f in summary.failed] == [str(archive / "broken.wav")]


def test_index_into_a_collection_that_ferrum_index_keeps(first_run, archive, tmp_path, minilm):
    from executors.search import SearchStore, index_paths, search_text

    out, _, _ = first_run
    db = tmp_path / "search.db"
    summary = run_batch([str(archive)], _options(out, index="archive", db=db))
    assert summary.written == 0 and summary.indexed == len(CLIPS) and not summary.index_failed
    with SearchStore(db) as store:
        hits = search_text(store, minilm, "go forward ten meters", collection="archive", k=1)
        assert Path(hits[0].source).name == "goforward.json"
        report = index_paths(store, minilm, [out], collection="archive")  # what `ferrum index OUT` would do
        assert report.files_skipped == len(CLIPS) and report.files_added == report.files_updated == 0
    again = run_batch([str(archive)], _options(out, index="archive", db=db))
    assert again.indexed == 0 and again.skipped == len(CLIPS)


@pytest.mark.slow  # the speaker models load in a Ray worker; test_diarization.py covers the engine
def test_diarize_labels_speakers_as_the_single_file_cli_does(cluster, tmp_path):
    """``--diarize`` runs the same diarization as ``ferrum transcribe --diarize`` on the workers."""
    import soundfile as sf
    from fixture_data import conversation

    conv = conversation(["asterisk", "librivox"], n_turns=4, seed=3)
    src = tmp_path / "src"
    src.mkdir()
    sf.write(src / "talk.wav", conv.audio, 16000)
    single, batched = tmp_path / "single", tmp_path / "batched"
    args = ["--threads", str(THREADS), "--quiet", "--diarize", "--format", "json"]
    assert main(["transcribe", str(src / "talk.wav"), "--output-dir", str(single), *args]) == 0
    assert main(["batch", str(src), "--output-dir", str(batched), "--local-cpus", "2", *args]) == 0
    want, got = (json.loads((d / "talk.json").read_text(encoding="utf-8")) for d in (single, batched))
    assert len(got["speakers"]) == 2
    assert [s["speaker"] for s in got["segments"]] == [s["speaker"] for s in want["segments"]]


def test_cli_runs_and_reports_with_windows_of_several_files_batched(cluster, archive, tmp_path, capsys):
    from executors.transcripts.exporters import parse_srt

    clips = [archive / "goforward.flac", archive / "activated.flac"]
    listing = tmp_path / "files.txt"
    listing.write_text(f"# two clips and a bad file\n{clips[0]}\n{clips[1]}\n{archive / 'broken.wav'}\n",
                       encoding="utf-8")
    code = main(["batch", str(listing), "--output-dir", str(tmp_path / "out"), "--format", "srt",
                 "--threads", str(THREADS), "--batch-size", "3"])
    err = capsys.readouterr().err
    assert code == 1
    texts = [" ".join(c[2] for c in parse_srt((tmp_path / "out" / f"{c.stem}.srt").read_text(encoding="utf-8")))
             for c in clips]
    assert "forward" in texts[0].lower() and "activated" in texts[1].lower()
    assert "2 written, 0 already done, 1 failed" in err and "broken.wav" in err
    assert "files" in err and "ETA" in err  # the progress line


def test_options_are_checked_before_anything_runs(tmp_path):
    from executors.core.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError):
        BatchOptions(output_dir=tmp_path, fmt="docx").validate()
    with pytest.raises(InvalidParameterError):
        BatchOptions(output_dir=tmp_path, db=tmp_path / "x.db").validate()
    with pytest.raises(InvalidParameterError):
        BatchOptions(output_dir=tmp_path, transcribe=TranscribeOptions(beam_size=0)).validate()
