"""``ferrum models`` and ``ferrum info`` on the real bundled models."""

from __future__ import annotations

import json
import shutil

import pytest

from executors.models.store import DEFAULT_EMBEDDING, DEFAULT_WHISPER, bundled_source
from ferrum_cli.main import main


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_models_json_lists_the_bundled_models_with_paths_and_sizes(capsys):
    code, out, _ = _run(capsys, "models", "--json")
    assert code == 0
    entries = {e["name"]: e for e in json.loads(out)}
    assert {DEFAULT_WHISPER, DEFAULT_EMBEDDING} <= set(entries)
    for name in (DEFAULT_WHISPER, DEFAULT_EMBEDDING):
        assert entries[name]["source"] == "bundled"
        assert entries[name]["size_bytes"] > 50_000_000
        assert entries[name]["path"]
    assert entries[DEFAULT_EMBEDDING]["kind"] == "embedding"


def test_models_import_then_listed_in_text_and_json(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("FERRUM_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "fw-tiny"
    shutil.copytree(bundled_source(DEFAULT_WHISPER), folder)
    code, out, _ = _run(capsys, "models", "import", str(folder), "--name", "cli-tiny", "--json")
    assert code == 0
    imported = json.loads(out)
    assert imported["name"] == "cli-tiny" and imported["size_bytes"] > 70_000_000
    assert str(tmp_path / "cache") in imported["path"]
    code, out, _ = _run(capsys, "models")
    assert code == 0
    line = next(l for l in out.splitlines() if l.startswith("cli-tiny"))
    assert "imported" in line and imported["path"] in line and "MB" in line


def test_models_import_of_a_non_ct2_folder_fails_cleanly(capsys, tmp_path):
    code, _, err = _run(capsys, "models", "import", str(tmp_path))
    assert code == 1
    assert "not a CTranslate2 Whisper folder" in err and "model.bin" in err


def test_models_import_of_a_missing_path_says_it_does_not_exist(capsys, tmp_path):
    code, _, err = _run(capsys, "models", "import", str(tmp_path / "missing"))
    assert code == 1
    assert f"{tmp_path / 'missing'} does not exist" in err and "not a CTranslate2" not in err
    assert "check the path" in err


def test_info_json_reports_devices_versions_models_and_executors(capsys):
    code, out, _ = _run(capsys, "info", "--json")
    info = json.loads(out)
    assert "cpu" in info["devices"]["available"]
    assert info["versions"]["torch"] and info["versions"]["transformers"]
    assert DEFAULT_WHISPER in {m["name"] for m in info["models"]}
    for name in ("whisper", "embedding"):
        report = info["executors"][name]
        assert "error" not in report, report.get("error")
        assert report["loaded"] is True
        assert report["status"]["is_ready"] is True
        assert report["capabilities"]["max_batch_size"] >= 1
        assert "cpu" in report["capabilities"]["supported_devices"]
        model = report["info"]
        assert model["model_id"] == report["model"]
        assert model["num_parameters"] > 1_000_000 and model["hidden_size"] == 384
        assert model["device"] == report["device"]
    whisper, embedding = info["executors"]["whisper"]["info"], info["executors"]["embedding"]["info"]
    assert (whisper["model_type"], whisper["vocab_size"]) == ("SpeechToText", 51864)
    assert whisper["metadata"]["architecture"] == "WhisperForConditionalGeneration"
    assert (embedding["model_type"], embedding["vocab_size"]) == ("Embedding", 30522)
    assert embedding["metadata"]["architecture"] == "BertModel"
    assert code == 0


def test_info_text_without_loading(capsys):
    code, out, _ = _run(capsys, "info", "--no-load")
    assert code == 0
    assert "Devices:" in out and "torch" in out
    assert f"{DEFAULT_WHISPER}: not loaded" in out


@pytest.mark.parametrize("argv", [["models", "--help"], ["info", "--help"]])
def test_subcommand_help(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    assert "--json" in capsys.readouterr().out
