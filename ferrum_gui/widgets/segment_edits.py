"""Undoable edits of a transcript (QUndoStack commands) and the editor a segment row opens.

Every change of a segment's text, typed or reverted, is one ``SetSegmentText`` command on the
transcript view's undo stack, and every speaker rename one ``RenameSpeaker``; applying either (redo
or undo) goes through the view, which shows the change and emits ``segmentEdited`` or
``speakerRenamed`` so the panel saves it. Nothing else changes segment text or speaker names.
"""

from __future__ import annotations

from PySide6.QtGui import QUndoCommand
from PySide6.QtWidgets import QLineEdit, QStyledItemDelegate


class SetSegmentText(QUndoCommand):
    def __init__(self, view, segment_id: int, old: str, new: str, title: str = "Edit segment"):
        super().__init__(title)
        self.view, self.segment_id, self.old, self.new = view, segment_id, old, new

    def redo(self) -> None:
        self.view.apply_text(self.segment_id, self.new)

    def undo(self) -> None:
        self.view.apply_text(self.segment_id, self.old)


class RenameSpeaker(QUndoCommand):
    """``label`` shown as ``new`` instead of ``old`` (an empty name: the default "Speaker N")."""

    def __init__(self, view, label: str, old: str, new: str):
        super().__init__("Rename speaker")
        self.view, self.label, self.old, self.new = view, label, old, new

    def redo(self) -> None:
        self.view.apply_speaker_name(self.label, self.new)

    def undo(self) -> None:
        self.view.apply_speaker_name(self.label, self.old)


class SegmentTextDelegate(QStyledItemDelegate):
    """A line editor holding the segment's whole text with the cursor at its end: starting an edit
    never selects (and so never replaces) what is there. Esc cancels, Enter commits."""

    def createEditor(self, parent, option, index):
        editor = QLineEdit(parent)
        editor.setFrame(False)
        editor.setClearButtonEnabled(False)
        return editor


def place_cursor_at_end(editor) -> None:
    """Qt selects all of a line editor's text when it opens; a transcript editor should not."""
    if isinstance(editor, QLineEdit):
        editor.deselect()
        editor.end(False)
