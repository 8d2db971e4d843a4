"""The int8 paths degrade to float, never break: with torch's quantised tensors and private int8
operators removed (``tests/torch_without_int8/sitecustomize.py`` makes each of them raise in a
subprocess), the real CLI and the app's engine service load float weights, say so once, and give
the right answers. In-process tests cover a kernel that fails on one layer and the float scan."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import torch
from fixture_data import utterance

from bench.common import normalize
from executors.core import kernels
from executors.core.kernels import KernelUnavailable
from executors.whisper import fbgemm

REPO = Path(__file__).resolve().parents[1]
SHIM = Path(__file__).resolve().parent / "torch_without_int8"
CLIPS = ("asterisk/agent-alreadyon.flac", "pocketsphinx/goforward.flac")
WHISPER_NOTE = "ferrum: fbgemm's int8 linear (quantized::linear_prepack / linear_dynamic) is unavailable"


def _without_int8(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SHIM), str(REPO)]), "FERRUM_THREADS": "2",
           "FERRUM_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


SHIM_CHECK = """
import torch

for call in (lambda: torch.ops.quantized.linear_prepack(None, None), lambda: torch._int_mm(None, None),
             lambda: torch._weight_int8pack_mm(None, None, None),
             lambda: torch._make_per_channel_quantized_tensor(None, None, None, 0)):
    try:
        call()
    except RuntimeError as exc:
        print(exc)
"""


def test_the_shim_removes_what_the_int8_paths_call(tmp_path):
    done = _without_int8(["-c", SHIM_CHECK], tmp_path)
    assert done.stdout.count("was removed from this torch") == 4, done.stdout


def test_cli_transcribes_on_float_weights_and_says_so_once(tmp_path):
    out = tmp_path / "out"
    done = _without_int8(["-m", "ferrum_cli.main", "transcribe", *(str(utterance(c).path) for c in CLIPS),
                          "--output-dir", str(out), "--no-history", "--quiet"], tmp_path)
    assert done.stderr.count(WHISPER_NOTE) == 1 and "was removed from this torch" in done.stderr, done.stderr
    for clip in CLIPS:
        text = (out / f"{Path(clip).stem}.txt").read_text(encoding="utf-8")
        assert normalize(text) == normalize(utterance(clip).reference), (clip, text)


def test_ferrum_info_reports_no_quantisation_and_why(tmp_path):
    done = _without_int8(["-m", "ferrum_cli.main", "info", "--json", "--device", "cpu"], tmp_path)
    whisper = json.loads(done.stdout)["executors"]["whisper"]
    metadata = whisper["info"]["metadata"]
    assert metadata["quantized"] is None
    assert "unavailable in this torch" in metadata["int8_fallback"] and "was removed" in metadata["int8_fallback"]
    assert whisper["info"]["dtype"] == "float32"
    assert done.stderr.count(WHISPER_NOTE) == 1, done.stderr


SERVICE_SCRIPT = """
import json, sys
from pathlib import Path
from executors.service import EngineService, ServiceSettings
from executors.service.settings import EMBEDDING, WHISPER

clip, folder, data = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
settings = ServiceSettings(device="cpu", embedding_int8=True, auto_index_transcripts=False,
                           history_db=data / "history.sqlite3", search_db=data / "search.db")
states = []
with EngineService(settings) as engine:
    engine.subscribe(lambda event: states.append((event.kind, event.state, event.message))
                     if type(event).__name__ == "ModelStateChanged" else None)
    whisper = engine.models.load(WHISPER).result().executor
    text = engine.transcribe(clip, save=False).result().transcript.text
    embedding = engine.models.load(EMBEDDING).result().executor
    engine.search.index_paths([folder]).result()
    hits = engine.search.search("rockets carrying astronauts into orbit", k=3, hybrid=False).result()
    print(json.dumps({"text": text, "states": states, "whisper": whisper.info().metadata,
                      "embedding": embedding.info().metadata, "embedding_dtype": embedding.info().dtype,
                      "hits": [Path(h.source).name for h in hits]}))
"""


def test_app_service_loads_float_models_transcribes_and_searches(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "space.txt").write_text("The shuttle lifted off from the launch pad and reached orbit with "
                                      "its crew of seven.", encoding="utf-8")
    (folder / "garden.txt").write_text("Tomatoes need full sun, rich soil and water every morning.", encoding="utf-8")
    (folder / "music.txt").write_text("The orchestra tuned up before the violin concerto began.", encoding="utf-8")
    clip = utterance(CLIPS[0])
    done = _without_int8(["-c", SERVICE_SCRIPT, str(clip.path), str(folder), str(tmp_path)], tmp_path)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert normalize(report["text"]) == normalize(clip.reference)
    assert report["whisper"]["quantized"] is None and "was removed" in report["whisper"]["int8_fallback"]
    ready = [message for kind, state, message in report["states"] if kind == "whisper" and state == "ready"]
    assert len(ready) == 1 and "not int8" in ready[0] and "was removed" in ready[0], ready
    assert report["embedding"]["quantized"] is False and report["embedding_dtype"] == "float32"
    assert "torch._int_mm was removed" in report["embedding"]["int8_fallback"]
    assert report["hits"][0] == "space.txt", report["hits"]
    for note in (WHISPER_NOTE, "ferrum: torch._int_mm", "ferrum: torch._weight_int8pack_mm"):
        assert done.stderr.count(note) == 1, (note, done.stderr)


def test_the_kernels_run_on_this_torch():
    """The fallbacks above are for a future torch; on this one every int8 kernel is used."""
    from executors.bert.quantize import int8_problem
    from executors.search import scan_kernel

    assert fbgemm.problem() is None
    assert int8_problem() is None
    assert scan_kernel.problem() is None


def test_a_failing_probe_is_reported_once(caplog):
    def probe():
        raise RuntimeError("no such operator")

    with caplog.at_level(logging.WARNING, logger=kernels.__name__):
        first = kernels.problem("test kernel A", probe, "doing it in float")
        second = kernels.problem("test kernel A", probe, "doing it in float")
    assert isinstance(first, KernelUnavailable) and isinstance(second, KernelUnavailable)
    assert "no such operator" in first.message and first.message.endswith("doing it in float")
    assert [r.getMessage() for r in caplog.records].count(f"ferrum: {first.message}") == 1


def test_the_float_scan_gives_the_kernels_scores_unrounded():
    from executors.search import scan_kernel

    torch.manual_seed(0)
    codes = torch.randint(-127, 128, (3000, 384), dtype=torch.int8)
    scales = (torch.rand(3000) / 127).to(torch.bfloat16)
    query = torch.randn(1, 384).div_(20).to(torch.bfloat16)
    exact = (codes.double() @ query[0].double()) * scales.double()
    fallback = scan_kernel.float_scores(query, codes, scales)
    kernel = torch._weight_int8pack_mm(query, codes, scales)[0]
    assert float((fallback.double() - exact).abs().max()) < 1e-5 * float(exact.abs().max())
    # the kernel rounds each score to bfloat16 (8 significant bits), which the search bounds allow for
    assert float((kernel.double() - exact).abs().max()) <= 2 ** -8 * float(exact.abs().max())
    assert torch.equal(torch.topk(fallback, 10).indices, torch.topk(exact.float(), 10).indices)
