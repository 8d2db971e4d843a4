"""Model choices on the real main window: a model picked from a folder shows by its name and, when
English-only, fixes Language and Task; a model picked on the Transcribe panel is remembered; a bad
model path in Preferences is refused and the working model kept (and not saved)."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from ferrum_gui.settings import HostSettings
from ferrum_gui.shell.preferences import ModelsPage


def _saved(window) -> HostSettings:
    return HostSettings.load(QSettings(window.qsettings.fileName(), QSettings.Format.IniFormat))


def _apply_speech_model(window, run_async, ref) -> None:
    """Preferences → Speech model: ``ref`` → Apply, as a user does; returns once the reload settled."""
    dialog = window.show_preferences()
    page = dialog.page(ModelsPage)
    page.whisper.setCurrentText(str(ref))
    run_async(dialog.apply()[dialog.pages.index(page)], timeout=600)
    dialog.close()


def test_an_imported_english_only_model_fixes_language_and_task(main_window, host, run_async, wait_until):
    from executors.models.store import bundled_source

    folder = bundled_source("whisper-tiny.en")  # the CTranslate2 folder: its name does not end in ".en"
    assert not str(folder).rstrip("/").endswith(".en")
    panel = main_window.show_panel("transcribe")
    bar = panel.options_bar
    original = host.settings
    try:
        _apply_speech_model(main_window, run_async, folder)
        wait_until(lambda: host.settings.whisper_model == str(folder) and host.model_state("whisper")[0] == "ready")
        assert not bar.language.isEnabled() and not bar.task.isEnabled()
        assert bar.language.currentData() == "en" and bar.task.currentData() == "transcribe"
        assert bar.model.currentText() == f"{folder.name} (folder)"  # not a path cut off mid-way
        assert str(folder) in bar.model.toolTip() and bar.current_model() == str(folder)
        assert _saved(main_window).whisper_model == str(folder)
    finally:
        run_async(host.reload(original), timeout=600)


def test_a_model_chosen_on_the_transcribe_panel_is_remembered(main_window, host, run_async, wait_until):
    panel = main_window.show_panel("transcribe")
    bar = panel.options_bar
    original = host.settings
    index = bar.model.findText("whisper-base")
    try:
        bar.model.setCurrentIndex(index)
        bar.model.activated.emit(index)  # what a pick from the list sends
        wait_until(lambda: host.settings.whisper_model == "whisper-base" and host.model_state("whisper")[0] == "ready"
                   and _saved(main_window).whisper_model == "whisper-base", timeout=300)
        wait_until(lambda: bar.language.isEnabled())  # multilingual: any language, and translation
        assert bar.task.isEnabled()
    finally:
        run_async(host.reload(original), timeout=600)


def test_options_are_remembered(main_window, qtbot, host):
    from ferrum_gui.shell.main_window import MainWindow

    bar = main_window.panels["transcribe"].options_bar
    bar.word_timestamps.click()
    assert bar.word_timestamps.isChecked()
    again = MainWindow(host, main_window.qsettings)  # as after a restart with the same settings
    try:
        assert again.panels["transcribe"].options_bar.word_timestamps.isChecked()
    finally:
        again.close()
        again.deleteLater()


def test_a_bad_model_path_is_refused_and_the_working_model_kept(main_window, host, run_async, tmp_path):
    monitor = main_window.show_panel("monitor")
    original = host.settings
    missing = tmp_path / "no-such-model"
    loaded = host.model("whisper")
    try:
        _apply_speech_model(main_window, run_async, missing)
        assert host.model_state("whisper")[0] == "ready" and host.model("whisper") is loaded
        assert host.settings.whisper_model == original.whisper_model
        assert _saved(main_window).whisper_model == original.whisper_model  # the bad path is not saved
        assert main_window.indicators["whisper"].label.text().endswith("ready")
        assert not monitor.cards["whisper"].state_label.text().lower().startswith("error")
        assert any("no-such-model" in card.message + (card.hint or "")
                   for card in main_window.notifications.notifications())
        assert host.whisper is not None and host.whisper.model_id == loaded.model_id
    finally:
        run_async(host.reload(original), timeout=300)


def test_the_model_box_lists_only_models_that_loaded(main_window, host, run_async, tmp_path):
    """Issue 29, item 5: a folder refused in Preferences is not offered as the running model."""
    bar = main_window.show_panel("transcribe").options_bar
    original = host.settings
    refused = tmp_path / "not-a-model"
    refused.mkdir()
    (refused / "notes.txt").write_text("no weights here", encoding="utf-8")
    try:
        _apply_speech_model(main_window, run_async, refused)
        assert host.model_state("whisper")[0] == "ready"
        models = [bar.model.itemData(i) for i in range(bar.model.count())]
        assert bar.current_model() == original.whisper_model and str(refused) not in models, models
        assert bar.model.currentText() == original.whisper_model
        dialog = main_window.show_preferences()  # opened again, it shows what runs
        try:
            assert dialog.page(ModelsPage).whisper.currentText() == original.whisper_model
        finally:
            dialog.close()
    finally:
        run_async(host.reload(original), timeout=300)
