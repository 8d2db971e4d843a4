"""Segments of one transcript: timestamps and editable text; clicking a timestamp plays it."""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QIcon, QPainter, QPalette, QPixmap, QPolygonF
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
)

from executors.transcripts.results import Segment

from .highlight import format_clock_ms
from .placeholder import PlaceholderMixin

COL_TIME, COL_TEXT = range(2)
_SEG_ROLE = Qt.ItemDataRole.UserRole


class TranscriptView(PlaceholderMixin, QTableWidget):
    """``segmentEdited(segment_id, text)`` after the user edits a row's text;
    ``playRequested(segment_id, start, end)`` when a timestamp is clicked or Space is pressed."""

    segmentEdited = Signal(int, str)
    playRequested = Signal(int, float, float)

    placeholder_text = ("No transcript yet.\nDrop audio or video files on the window, or pick one "
                        "from the history; segments appear here as they are decoded.")

    def __init__(self, parent=None):
        super().__init__(0, 2, parent)
        self._segments: dict[int, Segment] = {}
        self._filling = False
        self._play_icon = _play_icon(self)
        self.setHorizontalHeaderLabels(["Time", "Text"])
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
        self.itemChanged.connect(self._on_item_changed)
        self.cellClicked.connect(self._on_cell_clicked)

    # --- content -------------------------------------------------------------------------

    def clear_segments(self) -> None:
        self._segments.clear()
        self.setRowCount(0)
        self.viewport().update()

    def set_segments(self, segments: list[Segment]) -> None:
        self.clear_segments()
        for seg in segments:
            self.append_segment(seg)

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
