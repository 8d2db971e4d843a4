"""Editing and exporting a transcript as a user does it, on the real main window: a stray key on a
selected row changes nothing; F2 edits, Ctrl+Z / Ctrl+Shift+Z undo and redo (saved each time), a
segment can be reverted to what was recognised; the export dialog writes the format of the
extension typed, whatever filter is selected."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import shiboken6
import soundfile as sf
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit

CLIPS = ["pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0870.flac",
         "pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0880.flac"]


@pytest.fixture(scope="module")
def record_id(host, run_async, speech_dir, tmp_path_factory) -> int:
    parts = []
    for rel in CLIPS:
        audio, _ = sf.read(str(speech_dir / rel), dtype="float32")
        parts += [audio, np.zeros(8000, np.float32)]
    clip = tmp_path_factory.mktemp("editing") / "austen-two.wav"
    sf.write(str(clip), np.concatenate(parts), 16000)
    run_async(host.transcribe(clip), timeout=300)
    return next(e.id for e in run_async(host.list_history()) if e.source == str(clip))


def _open(main_window, record_id, wait_until):
    main_window.activateWindow()  # shortcuts (Ctrl+Z) reach only the active window
    wait_until(main_window.isActiveWindow, timeout=10)
    panel = main_window.show_panel("transcribe")
    shown: list[int] = []
    panel.recordShown.connect(shown.append)
    panel.show_record(record_id)
    wait_until(lambda: shown == [record_id] and panel.view.rowCount() >= 2)
    return panel


def _saved(host, run_async, record_id):
    return run_async(host.load_history(record_id))


def _wait_saved(host, run_async, wait_until, record_id, predicate):
    """Poll the history until the record satisfies ``predicate`` (edits are saved in the background)."""
    import asyncio

    last = []

    async def poll():
        while not predicate(record := await host.load_history(record_id)):
            last[:] = [record]
            await asyncio.sleep(0.05)
    try:
        run_async(poll(), timeout=30)
    except TimeoutError:
        pytest.fail(f"the history never showed the expected edit: {last[0].edited_segments} "
                    f"{last[0].transcript.segments[0].text!r}")


def _click_row(view, row: int) -> None:
    rect = view.visualItemRect(view.item(row, 1))
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())


def test_a_stray_key_on_a_selected_row_changes_nothing(main_window, host, record_id, wait_until, run_async):
    panel = _open(main_window, record_id, wait_until)
    view = panel.view
    before = view.segment_text(1)
    view.setFocus()
    _click_row(view, 1)
    assert view.currentRow() == 1
    QTest.keyClick(view, Qt.Key.Key_X)
    QTest.keyClick(view, Qt.Key.Key_Return)
    QTest.keyClick(view, Qt.Key.Key_Tab)
    QApplication.processEvents()
    assert view.segment_text(1) == before
    assert _saved(host, run_async, record_id).edited_segments == set()


def test_edit_undo_redo_and_revert_are_saved(main_window, host, record_id, wait_until, run_async):
    panel = _open(main_window, record_id, wait_until)
    view = panel.view
    original = view.segment_text(0)
    seg_id = view.segments()[0].id
    _click_row(view, 0)
    view.setFocus()

    QTest.keyClick(view, Qt.Key.Key_F2)  # edit: the whole text, the cursor at its end, nothing selected
    editor = view.focusWidget()
    assert isinstance(editor, QLineEdit) and editor.text() == original
    assert not editor.hasSelectedText() and editor.cursorPosition() == len(original)
    QTest.keyClicks(editor, " Indeed")
    QTest.keyClick(editor, Qt.Key.Key_Return)  # the view commits it on the next turn of the event loop
    wait_until(lambda: view.state() != view.State.EditingState)
    assert view.segment_text(0) == original + " Indeed"
    _wait_saved(host, run_async, wait_until, record_id,
                lambda r: r.transcript.segments[0].text.strip() == original + " Indeed")
    assert view.is_edited(seg_id)

    QTest.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undo
    assert view.segment_text(0) == original
    _wait_saved(host, run_async, wait_until, record_id, lambda r: r.edited_segments == set())
    assert not view.is_edited(seg_id)

    QTest.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert view.segment_text(0) == original + " Indeed"
    _wait_saved(host, run_async, wait_until, record_id, lambda r: r.edited_segments == {seg_id})

    # The edit survives reopening; "Revert to recognised text" brings the decoded text back.
    reopened: list[int] = []
    panel.recordShown.connect(reopened.append)
    panel.show_record(record_id)
    wait_until(lambda: reopened)
    assert view.is_edited(seg_id) and view.segment_text(0) == original + " Indeed"
    _click_row(view, 0)
    assert panel.revert_action.isEnabled()
    panel.revert_action.trigger()
    assert view.segment_text(0) == original
    _wait_saved(host, run_async, wait_until, record_id, lambda r: r.edited_segments == set())
    assert not panel.revert_action.isEnabled()
    QTest.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # the revert is undoable too
    assert view.segment_text(0) == original + " Indeed"
    _wait_saved(host, run_async, wait_until, record_id, lambda r: r.edited_segments == {seg_id})
    panel.revert_action.trigger()
    _wait_saved(host, run_async, wait_until, record_id, lambda r: r.edited_segments == set())


def _type_into_file_dialog(path: Path, filter_text: str | None = None) -> list:
    """Arm a timer that finds the export dialog, types ``path`` and presses Enter, as a user does."""
    seen: list[str] = []

    def fill():
        dialogs = [w for w in QApplication.topLevelWidgets() if isinstance(w, QFileDialog) and w.isVisible()]
        if not dialogs:
            QTimer.singleShot(50, fill)
            return
        dialog = dialogs[0]
        try:
            seen.append(dialog.selectedNameFilter())
            if filter_text is not None:
                dialog.selectNameFilter(filter_text)
            name = dialog.findChild(QLineEdit, "fileNameEdit")
            # the name completer lists the folder in a thread; on a busy machine its popup opens while
            # the path is typed and takes the Return meant for the dialog, which then never closes
            name.setCompleter(None)
            name.selectAll()
            QTest.keyClicks(name, str(path))
            QTest.keyClick(name, Qt.Key.Key_Return)
        finally:
            seen.append(dialog)

    QTimer.singleShot(50, fill)
    return seen


@pytest.mark.parametrize(("typed", "written", "first_line"), [
    ("notes.vtt", "notes.vtt", "WEBVTT"),
    ("notes.json", "notes.json", "{"),
    ("notes", "notes.srt", "1"),
])
def test_export_writes_the_format_of_the_typed_extension(main_window, record_id, tmp_path, wait_until, typed,
                                                         written, first_line):
    panel = _open(main_window, record_id, wait_until)
    folder = tmp_path / "exports"
    folder.mkdir()
    seen = _type_into_file_dialog(folder / typed)
    panel.export_dialog()
    try:
        wait_until(lambda: (folder / written).is_file() and "Exported" in panel.status.text(), timeout=30)
    finally:  # never leave a modal dialog behind
        for dialog in seen[1:]:
            if shiboken6.isValid(dialog) and dialog.isVisible():
                dialog.reject()
    assert seen and "srt" in seen[0].lower()  # the SRT filter was the selected one
    assert sorted(p.name for p in folder.iterdir()) == [written]
    assert (folder / written).read_text(encoding="utf-8").lstrip().startswith(first_line)


def test_word_timestamps_show_beside_each_segment(main_window, speech_dir, tmp_path, wait_until):
    import re
    import shutil

    panel = main_window.show_panel("transcribe")
    QTest.mouseClick(panel.options_bar.word_timestamps, Qt.MouseButton.LeftButton)
    assert panel.options_bar.word_timestamps.isChecked()
    clip = tmp_path / "cards.flac"
    shutil.copy(speech_dir / "pocketsphinx/cards_001.flac", clip)
    shown: list[int] = []
    panel.recordShown.connect(shown.append)
    [job] = panel.enqueue([clip])
    wait_until(lambda: shown and panel.jobs.state(job).finished, timeout=300)
    assert panel.view.shows_word_timings()
    words = panel.view.words_text(0)
    assert re.match(r"^\S+ \d+:\d\d\.\d(  ·  \S+ \d+:\d\d\.\d)+$", words), words
    assert panel.view.segment_text(0).split()[0].strip(",.").lower() in words.lower()
