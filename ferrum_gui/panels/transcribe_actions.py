"""The Transcribe panel's actions on the shown transcript: play/stop, add to search, export, and
undo/redo/revert of segment edits (also in the view's context menu and the window's Edit menu).

Stop is enabled only while a segment plays: ``Playback`` knows how long the slice lasts and is
told when playing fails or is stopped."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QStyle

from ..widgets.actions import panel_action

S = QStyle.StandardPixmap


class Playback(QObject):
    """Tracks whether a segment is playing, for the Stop action."""

    def __init__(self, host, stop_action, parent: QObject | None = None):
        super().__init__(parent)
        self.host, self.stop_action = host, stop_action
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.stopped)
        self.stopped()

    @property
    def playing(self) -> bool:
        return self.stop_action.isEnabled()

    def play(self, audio_path: str, start: float, end: float) -> None:
        future = self.host.play(audio_path, start, end)
        self.stop_action.setEnabled(True)
        self._timer.start(max(100, int((end - start) * 1000) + 300))
        future.add_done_callback(self._settled)

    def _settled(self, future) -> None:
        """Playing started (True), or failed: the host has shown why and the future holds None."""
        if future.cancelled() or future.exception() is not None or future.result() is not True:
            self.stopped()

    def stop(self) -> None:
        self.host.stop_playback()
        self.stopped()

    def stopped(self) -> None:
        self._timer.stop()
        self.stop_action.setEnabled(False)

    def shutdown(self) -> None:
        """The window closes: a segment still playing stops now, not from its stream's own thread while
        the interpreter finalises."""
        if self.playing:
            self.host.stop_playback()
        self._timer.stop()


def build_transcript_actions(panel) -> None:
    """Create the panel's transcript actions as attributes (``export_action``, ``index_action``,
    ``play_action``, ``stop_action``, ``undo_action``, ``redo_action``, ``revert_action``)."""
    view = panel.view
    panel.export_action = panel_action(panel, "Export…", "Ctrl+E", S.SP_DialogSaveButton, panel.export_dialog)
    panel.index_action = panel_action(panel, "Add to search", "Ctrl+Shift+I", S.SP_FileDialogContentsView,
                                      lambda: panel._tasks.spawn(panel.send_to_index(), "indexing the transcript"))
    panel.play_action = panel_action(panel, "Play segment", "Ctrl+P", S.SP_MediaPlay, view.play_selected)
    panel.stop_action = panel_action(panel, "Stop", "Ctrl+.", S.SP_MediaStop, lambda: panel.playback.stop())
    panel.playback = Playback(panel.host, panel.stop_action, panel)
    stack = view.undo_stack
    panel.undo_action = stack.createUndoAction(panel, "Undo")
    panel.redo_action = stack.createRedoAction(panel, "Redo")
    panel.undo_action.setShortcuts(QKeySequence.StandardKey.Undo)
    panel.redo_action.setShortcuts(list(dict.fromkeys([*QKeySequence.keyBindings(QKeySequence.StandardKey.Redo),
                                                       QKeySequence("Ctrl+Shift+Z")])))
    panel.revert_action = panel_action(panel, "Revert to recognised text", "Ctrl+Shift+R", S.SP_DialogResetButton,
                                       lambda: revert_selected(view))
    for action in (panel.undo_action, panel.redo_action):
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        panel.addAction(action)
    view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
    view.addActions([panel.play_action, panel.undo_action, panel.redo_action, panel.revert_action])


def revert_selected(view) -> None:
    seg = view.selected_segment()
    if seg is not None and view.is_edited(seg.id):
        view.revert_segment(seg.id)
