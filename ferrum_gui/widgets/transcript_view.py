"""Segments of one transcript: timestamps, speakers, editable text and, when the transcript has
them, word timings; clicking a timestamp plays the segment.

Editing starts only deliberately (double-click, F2) with the whole text kept and the cursor at
its end, so a stray key on a selected row changes nothing. Every change, typed or reverted, is a
command on ``undo_stack`` (Ctrl+Z / Ctrl+Shift+Z in the panel) and is announced on
``segmentEdited`` for saving; so is every speaker rename (``speakerRenamed``). Rows whose text
differs from what was recognised are marked.

The Speaker column shows only for diarized transcripts (shown between time and text; logically
after text so the other columns keep their indices); double-clicking a speaker renames it.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QInputDialog,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
)

from executors.transcripts.results import Segment, default_speaker_name

from ..icons import media_icon
from .highlight import format_clock_ms
from .placeholder import PlaceholderMixin
from .segment_edits import RenameSpeaker, SegmentTextDelegate, SetSegmentText, place_cursor_at_end
from .speaker_labels import SPEAKER_ROLE, SpeakerLabelDelegate, speaker_color

COL_TIME, COL_TEXT, COL_SPEAKER, COL_WORDS = range(4)
_SEG_ROLE = Qt.ItemDataRole.UserRole
_EDIT_TIP = "Double-click or press F2 to edit; Ctrl+Z undoes"


class TranscriptView(PlaceholderMixin, QTableWidget):
    """``segmentEdited(segment_id, text)`` after a segment's text changed (typed, undone, redone or
    reverted); ``playRequested(segment_id, start, end)`` when a timestamp is clicked or Space is pressed;
    ``speakerRenamed(label, name)`` when the user renames a speaker (every row of it changes)."""

    segmentEdited = Signal(int, str)
    playRequested = Signal(int, float, float)
    speakerRenamed = Signal(str, str)

    placeholder_text = ("No transcript yet.\nDrop audio or video files on the window, or pick one "
                        "from the history; segments appear here as they are decoded.")

    def __init__(self, parent=None):
        super().__init__(0, 4, parent)
        self._segments: dict[int, Segment] = {}
        self._rows: dict[int, int] = {}  # segment id -> its row
        self._original: dict[int, str] = {}   # recognised text per segment (what Revert restores)
        self._speaker_names: dict[str, str] = {}
        self._speaker_order: list[str] = []
        self._filling = False
        self._play_icon = media_icon(QStyle.StandardPixmap.SP_MediaPlay)  # follows a theme switch
        self.undo_stack = QUndoStack(self)
        self.setHorizontalHeaderLabels(["Time", "Text", "Speaker", "Word timings"])
        self.setItemDelegateForColumn(COL_SPEAKER, SpeakerLabelDelegate(self))
        self.verticalHeader().setVisible(False)
        self.setWordWrap(True)
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.setItemDelegateForColumn(COL_TEXT, SegmentTextDelegate(self))
        header = self.horizontalHeader()
        header.setSectionResizeMode(COL_TIME, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_TEXT, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COL_SPEAKER, QHeaderView.ResizeMode.ResizeToContents)
        header.moveSection(header.visualIndex(COL_SPEAKER), 1)
        header.setSectionResizeMode(COL_WORDS, QHeaderView.ResizeMode.Stretch)
        self.setColumnHidden(COL_SPEAKER, True)
        self.setColumnHidden(COL_WORDS, True)
        self.itemChanged.connect(self._on_item_changed)
        self.cellClicked.connect(self._on_cell_clicked)
        self.cellDoubleClicked.connect(self._on_cell_double_clicked)

    # --- content -------------------------------------------------------------------------

    def clear_segments(self) -> None:
        self._segments.clear()
        self._rows.clear()
        self._original.clear()
        self.undo_stack.clear()
        self._speaker_order.clear()
        self._speaker_names = {}
        self.setRowCount(0)
        self.setColumnHidden(COL_SPEAKER, True)
        self.setColumnHidden(COL_WORDS, True)
        self.viewport().update()

    def set_segments(self, segments: list[Segment], speaker_names: dict[str, str] | None = None,
                     original_texts: dict[int, str] | None = None) -> None:
        """Show a transcript; ``speaker_names``: names the user gave to speaker labels;
        ``original_texts``: the recognised text of segments the user edited."""
        self.clear_segments()
        self._speaker_names = dict(speaker_names or {})
        for seg in segments:
            self.append_segment(seg)
        for seg_id, text in (original_texts or {}).items():
            if seg_id in self._original:
                self._original[seg_id] = text
                self._mark(seg_id)

    def complete(self, segments: list[Segment]) -> None:
        """Bring the rows shown while decoding to the finished transcript's ``segments`` (e.g. now with
        speakers), keeping the user's edits; rows already equal are not redrawn."""
        edited = {seg_id: seg.text for seg_id, seg in self._segments.items() if self.is_edited(seg_id)}
        final = [replace(seg, text=edited.get(seg.id, seg.text)) for seg in segments]
        if final != self.segments():  # a rebuild also clears the undo history, as opening a record does
            self.set_segments(final, self.speaker_names(), {seg_id: self._original[seg_id] for seg_id in edited})

    # --- speakers ------------------------------------------------------------------------

    def speaker_names(self) -> dict[str, str]:
        """Names the user gave to speaker labels."""
        return dict(self._speaker_names)

    def speaker_name(self, label: str) -> str:
        return self._speaker_names.get(label) or default_speaker_name(label)

    def rename_speaker(self, label: str, name: str) -> None:
        """Show ``label`` as ``name`` on every row (empty = the default name), undoably."""
        name = " ".join(name.split())
        if name == default_speaker_name(label):
            name = ""
        old = self._speaker_names.get(label, "")
        if name != old:
            self.undo_stack.push(RenameSpeaker(self, label, old, name))

    def apply_speaker_name(self, label: str, name: str) -> None:
        """Show and announce a speaker's name (the undo commands' one way in); emits ``speakerRenamed``."""
        if name:
            self._speaker_names[label] = name
        else:
            self._speaker_names.pop(label, None)
        self._filling = True
        try:
            for row in range(self.rowCount()):
                item = self.item(row, COL_SPEAKER)
                if item is not None and item.data(SPEAKER_ROLE) == label:
                    item.setText(self.speaker_name(label))
        finally:
            self._filling = False
        self.speakerRenamed.emit(label, name)

    def rename_speaker_dialog(self, label: str) -> None:
        name, ok = QInputDialog.getText(self, "Rename speaker",
                                        f"Name for {self.speaker_name(label)} in the whole transcript:",
                                        text=self.speaker_name(label))
        if ok:
            self.rename_speaker(label, name)

    def _speaker_item(self, seg: Segment) -> QTableWidgetItem:
        item = QTableWidgetItem()
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        item.setData(_SEG_ROLE, seg.id)
        if seg.speaker:
            if seg.speaker not in self._speaker_order:
                self._speaker_order.append(seg.speaker)
            dark = self.palette().color(QPalette.ColorRole.Base).lightness() < 128
            item.setText(self.speaker_name(seg.speaker))
            item.setData(SPEAKER_ROLE, seg.speaker)
            item.setBackground(speaker_color(self._speaker_order.index(seg.speaker), dark))
            item.setToolTip("Double-click to rename this speaker everywhere in the transcript")
            self.setColumnHidden(COL_SPEAKER, False)
        return item

    def append_segment(self, seg: Segment) -> None:
        """Add a segment (or replace the row of one with the same id)."""
        self._filling = True
        try:
            row = self.row_of(seg.id)
            if row is None:
                row = self.rowCount()
                self.insertRow(row)
                self._rows[seg.id] = row
            self._segments[seg.id] = seg
            self._original[seg.id] = seg.text
            time_item = QTableWidgetItem(f"{format_clock_ms(seg.start)} – {format_clock_ms(seg.end)}")
            time_item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            time_item.setIcon(self._play_icon)
            time_item.setToolTip("Click to play this segment")
            time_item.setData(_SEG_ROLE, seg.id)
            text_item = QTableWidgetItem(seg.text.strip())
            text_item.setData(_SEG_ROLE, seg.id)
            text_item.setToolTip(_EDIT_TIP)
            words = _words_text(seg)
            words_item = QTableWidgetItem(words)
            words_item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            words_item.setForeground(self.palette().color(QPalette.ColorRole.PlaceholderText))
            self.setItem(row, COL_TIME, time_item)
            self.setItem(row, COL_TEXT, text_item)
            self.setItem(row, COL_SPEAKER, self._speaker_item(seg))
            self.setItem(row, COL_WORDS, words_item)
            if words:
                self.setColumnHidden(COL_WORDS, False)
            self.resizeRowToContents(row)
        finally:
            self._filling = False

    def segments(self) -> list[Segment]:
        """Segments in display order, with the user's edits applied."""
        return [self._segments[self.item(row, COL_TEXT).data(_SEG_ROLE)] for row in range(self.rowCount())]

    def row_of(self, segment_id: int) -> int | None:
        """The row showing ``segment_id`` (rows are only appended, so a dict keeps this O(1) on long files)."""
        return self._rows.get(segment_id)

    def segment_text(self, row: int) -> str:
        return self.item(row, COL_TEXT).text()

    def words_text(self, row: int) -> str:
        return self.item(row, COL_WORDS).text()

    def shows_word_timings(self) -> bool:
        return not self.isColumnHidden(COL_WORDS)

    # --- editing -------------------------------------------------------------------------

    def edit_segment_text(self, segment_id: int, text: str) -> None:
        """Programmatic equivalent of the user typing into a row (undoable, emits ``segmentEdited``)."""
        self._push(segment_id, text, "Edit segment")

    def revert_segment(self, segment_id: int) -> None:
        """Put back the recognised text of a segment (undoable)."""
        self._push(segment_id, self._original[segment_id], "Revert segment")

    def is_edited(self, segment_id: int) -> bool:
        seg = self._segments.get(segment_id)
        return seg is not None and seg.text.strip() != self._original.get(segment_id, seg.text).strip()

    def apply_text(self, segment_id: int, text: str) -> None:
        """Show and announce a segment's new text (the undo commands' one way in)."""
        seg = self._segments[segment_id]
        # Keep Whisper's leading space so joined segment texts stay separated by one space.
        seg.text = (" " if self._original.get(segment_id, seg.text).startswith(" ") else "") + text.strip()
        row = self.row_of(segment_id)
        if row is not None:
            self._filling = True
            try:
                self.item(row, COL_TEXT).setText(text.strip())
            finally:
                self._filling = False
            self._mark(segment_id)
            self.resizeRowToContents(row)
        self.segmentEdited.emit(segment_id, seg.text)

    def _push(self, segment_id: int, text: str, title: str) -> None:
        old = self._segments[segment_id].text.strip()
        if text.strip() != old:
            self.undo_stack.push(SetSegmentText(self, segment_id, old, text.strip(), title))

    def _mark(self, segment_id: int) -> None:
        """Edited rows: italic text, and the recognised text in the tooltip."""
        row = self.row_of(segment_id)
        if row is None:
            return
        item = self.item(row, COL_TEXT)
        edited = self.is_edited(segment_id)
        font = item.font()
        font.setItalic(edited)
        item.setFont(font)
        item.setToolTip(f"Edited. Recognised text: {self._original[segment_id].strip()}\n{_EDIT_TIP}"
                        if edited else _EDIT_TIP)

    def edit(self, index, trigger=None, event=None):
        opened = super().edit(index, trigger, event) if trigger is not None else super().edit(index)
        if opened:
            place_cursor_at_end(self.indexWidget(index))
        return opened

    # --- selection and playback ------------------------------------------------------------

    def select_segment(self, segment_id: int) -> bool:
        row = self.row_of(segment_id)
        if row is None:
            return False
        self.selectRow(row)
        self.scrollToItem(self.item(row, COL_TEXT), QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    def selected_segment(self) -> Segment | None:
        rows = self.selectionModel().selectedRows() if self.selectionModel() else []
        if not rows:
            return None
        return self._segments.get(self.item(rows[0].row(), COL_TIME).data(_SEG_ROLE))

    def play_selected(self) -> None:
        seg = self.selected_segment()
        if seg is not None:
            self.playRequested.emit(seg.id, seg.start, seg.end)

    # --- internals -----------------------------------------------------------------------

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if self._filling or item.column() != COL_TEXT:
            return
        seg_id = item.data(_SEG_ROLE)
        new, old = item.text().strip(), self._segments[seg_id].text.strip()
        if new != old:  # typed in the editor: becomes an undoable command (which saves it)
            self.undo_stack.push(SetSegmentText(self, seg_id, old, new))

    def _on_cell_clicked(self, row: int, column: int) -> None:
        if column == COL_TIME:
            seg = self._segments[self.item(row, COL_TIME).data(_SEG_ROLE)]
            self.playRequested.emit(seg.id, seg.start, seg.end)

    def _on_cell_double_clicked(self, row: int, column: int) -> None:
        label = self.item(row, COL_SPEAKER).data(SPEAKER_ROLE) if column == COL_SPEAKER else None
        if label:
            self.rename_speaker_dialog(label)

    def keyPressEvent(self, event):
        if event.key() == Qt.Key.Key_Space and self.state() != QAbstractItemView.State.EditingState:
            self.play_selected()
            return
        super().keyPressEvent(event)

    def keyboardSearch(self, search: str) -> None:
        """Typing on a row neither edits it nor jumps around the transcript."""


def _words_text(seg: Segment) -> str:
    """"Dashwood 0:01.2 · was 0:01.6 · …" for a segment with word timestamps, else ""."""
    if not seg.words:
        return ""
    return "  ·  ".join(f"{w.word.strip()} {format_clock_ms(w.start)}" for w in seg.words)
