"""Segments of one transcript: timestamps, speakers and editable text; clicking a timestamp plays it.

The Speaker column shows only for diarized transcripts (shown between time and text, kept as the
last logical column so the others keep their indices); double-clicking a speaker renames it.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QIcon, QPainter, QPalette, QPixmap, QPolygonF
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QInputDialog,
    QTableWidget,
    QTableWidgetItem,
)

from executors.transcripts.results import Segment, default_speaker_name

from .highlight import format_clock_ms
from .placeholder import PlaceholderMixin
from .speaker_labels import SPEAKER_ROLE, SpeakerLabelDelegate, speaker_color

COL_TIME, COL_TEXT, COL_SPEAKER = range(3)
_SEG_ROLE = Qt.ItemDataRole.UserRole


class TranscriptView(PlaceholderMixin, QTableWidget):
    """``segmentEdited(segment_id, text)`` after the user edits a row's text;
    ``playRequested(segment_id, start, end)`` when a timestamp is clicked or Space is pressed;
    ``speakerRenamed(label, name)`` when the user renames a speaker (every row of it changes)."""

    segmentEdited = Signal(int, str)
    playRequested = Signal(int, float, float)
    speakerRenamed = Signal(str, str)

    placeholder_text = ("No transcript yet.\nDrop audio or video files on the window, or pick one "
                        "from the history; segments appear here as they are decoded.")

    def __init__(self, parent=None):
        super().__init__(0, 3, parent)
        self._segments: dict[int, Segment] = {}
        self._speaker_names: dict[str, str] = {}
        self._speaker_order: list[str] = []
        self._filling = False
        self._play_icon = _play_icon(self)
        self.setHorizontalHeaderLabels(["Time", "Text", "Speaker"])
        self.setItemDelegateForColumn(COL_SPEAKER, SpeakerLabelDelegate(self))
        self.verticalHeader().setVisible(False)
        self.setWordWrap(True)
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed
                             | QAbstractItemView.EditTrigger.AnyKeyPressed)
        header = self.horizontalHeader()
        header.setSectionResizeMode(COL_TIME, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COL_TEXT, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COL_SPEAKER, QHeaderView.ResizeMode.ResizeToContents)
        header.moveSection(header.visualIndex(COL_SPEAKER), 1)
        self.setColumnHidden(COL_SPEAKER, True)
        self.itemChanged.connect(self._on_item_changed)
        self.cellClicked.connect(self._on_cell_clicked)
        self.cellDoubleClicked.connect(self._on_cell_double_clicked)

    # --- content -------------------------------------------------------------------------

    def clear_segments(self) -> None:
        self._segments.clear()
        self._speaker_order.clear()
        self._speaker_names = {}
        self.setRowCount(0)
        self.setColumnHidden(COL_SPEAKER, True)
        self.viewport().update()

    def set_segments(self, segments: list[Segment], speaker_names: dict[str, str] | None = None) -> None:
        self.clear_segments()
        self._speaker_names = dict(speaker_names or {})
        for seg in segments:
            self.append_segment(seg)

    # --- speakers ------------------------------------------------------------------------

    def speaker_names(self) -> dict[str, str]:
        """Names the user gave to speaker labels."""
        return dict(self._speaker_names)

    def speaker_name(self, label: str) -> str:
        return self._speaker_names.get(label) or default_speaker_name(label)

    def rename_speaker(self, label: str, name: str) -> None:
        """Show ``label`` as ``name`` on every row (empty = the default name); emits ``speakerRenamed``."""
        name = " ".join(name.split())
        if name and name != default_speaker_name(label):
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
            self._segments[seg.id] = seg
            time_item = QTableWidgetItem(f"{format_clock_ms(seg.start)} – {format_clock_ms(seg.end)}")
            time_item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            time_item.setIcon(self._play_icon)
            time_item.setToolTip("Click to play this segment")
            time_item.setData(_SEG_ROLE, seg.id)
            text_item = QTableWidgetItem(seg.text.strip())
            text_item.setData(_SEG_ROLE, seg.id)
            text_item.setToolTip(_words_tooltip(seg) or "Double-click or press F2 to edit")
            self.setItem(row, COL_TIME, time_item)
            self.setItem(row, COL_TEXT, text_item)
            self.setItem(row, COL_SPEAKER, self._speaker_item(seg))
            self.resizeRowToContents(row)
        finally:
            self._filling = False

    def segments(self) -> list[Segment]:
        """Segments in display order, with the user's edits applied."""
        out = []
        for row in range(self.rowCount()):
            out.append(self._segments[self.item(row, COL_TEXT).data(_SEG_ROLE)])
        return out

    def row_of(self, segment_id: int) -> int | None:
        for row in range(self.rowCount()):
            if self.item(row, COL_TIME) and self.item(row, COL_TIME).data(_SEG_ROLE) == segment_id:
                return row
        return None

    def segment_text(self, row: int) -> str:
        return self.item(row, COL_TEXT).text()

    def edit_segment_text(self, segment_id: int, text: str) -> None:
        """Programmatic equivalent of the user typing into a row (emits ``segmentEdited``)."""
        self.item(self.row_of(segment_id), COL_TEXT).setText(text)

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
        seg = self._segments[item.data(_SEG_ROLE)]
        new = item.text().strip()
        if new == seg.text.strip():
            return
        # Keep Whisper's leading space so joined segment texts stay separated by one space.
        seg.text = (" " if seg.text.startswith(" ") else "") + new
        self.segmentEdited.emit(seg.id, seg.text)

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


def _play_icon(widget) -> QIcon:
    """A small play triangle in the palette's text colour (readable in light and dark themes)."""
    size = 12
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(widget.palette().color(QPalette.ColorRole.Text))
    painter.drawPolygon(QPolygonF([QPointF(2, 1), QPointF(11, 6), QPointF(2, 11)]))
    painter.end()
    return QIcon(pixmap)


def _words_tooltip(seg: Segment) -> str:
    if not seg.words:
        return ""
    return " ".join(f"{w.word.strip()} [{w.start:.2f}]" for w in seg.words[:60])
