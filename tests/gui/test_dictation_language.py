"""Language as the Whisper model changes, on the real main window: dictation runs on the multilingual
whisper-base (Auto-detect, or the language chosen on the Dictation panel), an English-only model offers
English only, and leaving it does not keep its forced English (issue 29, items 1 and 3)."""

from __future__ import annotations

from tests.audio_fixtures import DEV_CLIP, SPEECH_DIR, read_reference
from tests.speech_eval import corpus_wer

SHORT_CLIP = SPEECH_DIR / "pocketsphinx" / "goforward.flac"


def _choose_model(window, host, wait_until, ref: str) -> None:
    """Pick ``ref`` in the Transcribe panel's model box, as a user does, and wait until it runs."""
    bar = window.show_panel("transcribe").options_bar
    index = bar.model.findData(ref)
    assert index >= 0, ref
    bar.model.setCurrentIndex(index)
    bar.model.activated.emit(index)  # what a pick from the list sends
    wait_until(lambda: host.model_state("whisper")[0] == "ready" and host.model("whisper").model_id == ref,
               timeout=600)


def _codes(combo) -> list:
    return [combo.itemData(i) for i in range(combo.count())]


def _dictate(panel, wait_until, clip):
    panel.start_file(clip, speed=0)
    wait_until(lambda: panel.state != "idle", timeout=60)
    wait_until(lambda: panel.state == "idle", timeout=600)
    return panel.sessions[-1]


def test_dictation_runs_on_the_multilingual_model(main_window, host, wait_until, run_async, listen):
    failures = []
    listen(host.failure, failures.append)
    original = host.settings
    panel = main_window.panels["dictation"]
    try:
        _choose_model(main_window, host, wait_until, "whisper-base")
        main_window.show_panel("dictation")
        session = _dictate(panel, wait_until, DEV_CLIP)  # Auto-detect, as the panel starts
        assert not failures, failures
        assert corpus_wer([read_reference(DEV_CLIP)], [panel.committed_text()]) <= 35.0, panel.committed_text()
        assert session.language == "en"  # detected

        codes = _codes(panel.language)
        assert codes[0] is None and {"en", "de", "fr"} <= set(codes) and panel.language.isEnabled()
        panel.language.setCurrentIndex(panel.language.findData("fr"))  # the user says which language
        session = _dictate(panel, wait_until, SHORT_CLIP)
        assert not failures, failures
        assert session.language == "fr" and session.text
        records = [run_async(host.load_history(r)) for r in run_async(panel.save())]
        assert [r.transcript.language for r in records] == ["en", "fr"]
    finally:
        run_async(host.reload(original), timeout=600)
    wait_until(lambda: _codes(panel.language) == ["en"], timeout=30)  # tiny.en again: English only


def test_leaving_the_english_only_model_resets_language_to_auto_detect(main_window, host, wait_until, run_async):
    from ferrum_gui.shell.main_window import MainWindow

    bar = main_window.show_panel("transcribe").options_bar
    dictation = main_window.panels["dictation"]
    assert bar.language.currentData() == "en" and not bar.language.isEnabled()  # forced by tiny.en
    original = host.settings
    try:
        _choose_model(main_window, host, wait_until, "whisper-base")
        wait_until(lambda: bar.language.isEnabled(), timeout=30)
        assert bar.language.currentText() == "Auto-detect" and bar.language.currentData() is None
        assert dictation.language.currentData() is None and dictation.language.isEnabled()
        again = MainWindow(host, main_window.qsettings)  # as after a restart with the same settings
        try:
            assert again.panels["transcribe"].options_bar.language.currentData() is None
        finally:
            again.close()
            again.deleteLater()

        _choose_model(main_window, host, wait_until, original.whisper_model)  # and back: English only again
        assert _codes(bar.language) == ["en"] and not bar.language.isEnabled()
    finally:
        run_async(host.reload(original), timeout=600)
