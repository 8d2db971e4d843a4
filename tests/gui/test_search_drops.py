"""Files dragged onto the Search panel of the real main window (issue 29, item 6): documents and folders
are indexed there as "Add files/folder" does; audio dragged there still goes to the Transcribe queue.

The drag events go to the window's platform window at a point over the panel, as the platform sends
them, so Qt itself picks the widget that takes the drop."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragLeaveEvent, QDropEvent
from PySide6.QtWidgets import QApplication


def _mime(paths) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


def _drag_over(window, widget, mime) -> tuple[QDragEnterEvent, QPointF]:
    point = widget.mapTo(window, widget.rect().center())
    enter = QDragEnterEvent(point, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window.windowHandle(), enter)
    return enter, QPointF(point)


def test_documents_dropped_on_the_search_panel_are_indexed_there(main_window, tmp_path, wait_until, run_async,
                                                                 speech_dir):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "orbit.md").write_text("# Launch log\n\nThe probe reached a stable lunar orbit after the third "
                                    "engine burn.", encoding="utf-8")
    agenda = tmp_path / "agenda.txt"
    agenda.write_text("Budget review for the greenhouse irrigation pumps on Thursday.", encoding="utf-8")
    panel = main_window.show_panel("search")
    jobs_before = main_window.panels["transcribe"].jobs.job_ids()
    main_window.notifications.clear()
    outcomes: list[str] = []
    panel.indexingFinished.connect(outcomes.append)

    documents = _mime([notes, agenda])
    enter, point = _drag_over(main_window, panel.sources, documents)
    assert enter.isAccepted()
    assert not main_window.drop_overlay.isVisible(), main_window.drop_overlay.text
    assert panel.drop_overlay.isVisible()
    assert panel.drop_overlay.text == "Drop to make 1 file and 1 folder searchable"
    drop = QDropEvent(point, Qt.DropAction.CopyAction, documents, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(main_window.windowHandle(), drop)
    assert drop.isAccepted() and not panel.drop_overlay.isVisible()

    assert main_window.current_panel_key() == "search"
    assert {str(notes), str(agenda)} <= set(panel.source_paths())
    try:
        _indexed_there_not_transcribed(main_window, panel, outcomes, run_async, wait_until, jobs_before)
    finally:  # the session's other Search tests expect only their own documents in the index
        _remove_sources(panel, {str(notes), str(agenda)}, wait_until)

    audio = _mime([speech_dir / "pocketsphinx/goforward.flac"])  # audio is not the panel's: it is transcribed
    enter, _ = _drag_over(main_window, panel.sources, audio)
    assert enter.isAccepted() and main_window.drop_overlay.isVisible()
    assert main_window.drop_overlay.text == "Drop to transcribe 1 file"
    assert not panel.drop_overlay.isVisible()
    QApplication.sendEvent(main_window.windowHandle(), QDragLeaveEvent())
    assert not main_window.drop_overlay.isVisible()


def _indexed_there_not_transcribed(main_window, panel, outcomes, run_async, wait_until, jobs_before) -> None:
    wait_until(lambda: outcomes, timeout=300)
    assert outcomes == ["done"], panel.index_status.text()
    assert main_window.panels["transcribe"].jobs.job_ids() == jobs_before
    assert not any("audio or video" in m for m in main_window.notifications.messages())
    panel.scope.setCurrentIndex(panel.scope.findData("default"))
    hits = run_async(panel.search("lunar orbit engine burn"))
    assert hits and Path(hits[0].source).name == "orbit.md"
    hits = run_async(panel.search("greenhouse irrigation budget"))
    assert hits and Path(hits[0].source).name == "agenda.txt"


def _remove_sources(panel, paths: set[str], wait_until) -> None:
    """Select each of ``paths`` in the panel's source list and remove it, as a user would."""
    removed: list[int] = []
    panel.sourcesRemoved.connect(removed.append)
    for path in paths:
        rows = [r for r in range(panel.sources.count()) if panel.sources.item(r).toolTip() == path]
        panel.sources.setCurrentRow(rows[0])   # a source's tooltip is its full path
        panel.remove_selected_source()
        wait_until(lambda n=len(removed): len(removed) > n, timeout=60)
    assert not paths & set(panel.source_paths())
