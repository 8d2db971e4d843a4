"""What a batch run works on (sources, output names, resources) and the Ray import boundary; no Ray started."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from executors.batch.cluster import ClusterInfo
from executors.batch.options import BatchOptions
from executors.batch.resources import plan_resources
from executors.batch.sources import SUMMARY_NAME, plan_items
from executors.core.errors import NotFoundError

ROOT = Path(__file__).resolve().parents[1]


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    return path


def test_folders_are_mirrored_lists_are_read_and_names_never_collide(tmp_path):
    src = tmp_path / "talks"
    a = _touch(src / "2019" / "intro.mp3")
    b = _touch(src / "2019" / "intro.wav")          # same stem, same folder
    c = _touch(src / "keynote.m4a")
    _touch(src / ".cache" / "hidden.wav")           # hidden folders are skipped
    _touch(src / "notes.pdf")                       # not audio: not picked up from a folder
    loose = _touch(tmp_path / "elsewhere" / "keynote.flac")  # same stem as c, named in a list
    summary_clash = _touch(tmp_path / "elsewhere" / "ferrum-batch-summary.wav")
    listing = tmp_path / "more.lst"
    listing.write_text("# extra files\nelsewhere/keynote.flac\n\n" + str(summary_clash) + "\n", encoding="utf-8")
    out = tmp_path / "out"

    items = plan_items([str(src), str(listing), str(a)], out, "json")  # a twice: planned once

    assert [i.source for i in items] == sorted([a, b, c, loose, summary_clash])
    outputs = {i.source: i.output.relative_to(out).as_posix() for i in items}
    assert outputs[a] == "2019/intro.json" and outputs[b] == "2019/intro-2.json"
    assert outputs[loose] == "keynote.json" and outputs[c] == "keynote-2.json"  # path order: elsewhere < talks
    assert outputs[summary_clash] == "ferrum-batch-summary-2.json" != SUMMARY_NAME
    assert [i.index for i in items] == list(range(5))
    assert plan_items([str(a), str(listing), str(src)], out, "json") == items  # nor does the order of sources


def test_a_missing_source_is_a_clear_error(tmp_path):
    with pytest.raises(NotFoundError, match="does not exist"):
        plan_items([str(tmp_path / "nope.wav")], tmp_path, "txt")


@pytest.mark.parametrize("nodes,cpus,gpus,options,expected", [
    (1, 2, 0, {}, (2, 1, "cpu", 0.75, 0.0, 0)),         # this machine: a one-thread worker per core, decoding its files
    (4, 64, 0, {}, (64, 1, "cpu", 0.96, 0.0, 0)),       # 16-core nodes: sixteen one-thread workers each
    (2, 128, 0, {}, (32, 4, "cpu", 3.96, 0.0, 0)),      # 64-core nodes: at most 16 workers, of 4 threads
    (1, 2, 0, {"threads": 2}, (1, 2, "cpu", 1.5, 0.0, 0)),  # threads given: as many workers as fit
    (1, 2, 0, {"workers": 2, "threads": 1}, (2, 1, "cpu", 0.75, 0.0, 0)),  # never more than the node has
    (2, 32, 4, {}, (4, 1, "cuda", 1.0, 1.0, 4)),        # GPUs: one worker per GPU, decoding tasks feed them
    (2, 32, 4, {"device": "cpu"}, (32, 1, "cpu", 0.96, 0.0, 0)),  # told not to use the GPUs
])
def test_workers_and_what_they_reserve(tmp_path, nodes, cpus, gpus, options, expected):
    info = ClusterInfo("x", "127.0.0.1", nodes, cpus, gpus, False)
    res = plan_resources(info, BatchOptions(output_dir=tmp_path, **options))
    assert (res.workers, res.threads, res.device, res.worker_cpus, res.worker_gpus, res.decoders) == expected
    assert res.workers * res.worker_cpus <= cpus - 0.5 * nodes or res.worker_gpus  # room left to embed


_PROBE = """
import importlib, pkgutil, sys
import executors, ferrum_cli.main
skip = {"executors.batch.cluster", "executors.batch.pipeline"}
for m in pkgutil.walk_packages(executors.__path__, "executors."):
    if m.name not in skip and not m.name.startswith("executors.gui"):
        importlib.import_module(m.name)
ferrum_cli.main.build_parser()
print("RAY:" + ",".join(sorted(m for m in sys.modules if m.split(".")[0] == "ray")))
"""


def test_only_the_batch_pipeline_imports_ray():
    proc = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "RAY:"
    importers = []
    for path in sorted((ROOT / "executors").rglob("*.py")) + sorted((ROOT / "ferrum_cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            if any(n == "ray" or n.startswith("ray.") for n in names):
                importers.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(importers)) == ["executors/batch/cluster.py", "executors/batch/pipeline.py"]


def test_cluster_auto_needs_ray_address(monkeypatch):
    from executors.batch.cluster import ray_cluster
    from executors.core.errors import ConfigError

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(ConfigError, match="RAY_ADDRESS"):
        with ray_cluster("auto"):
            pass
