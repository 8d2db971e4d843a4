"""Past transcripts: date, file, duration, language and status; activating a row opens it."""

from __future__ import annotations

import datetime as dt

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QMenu,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
)

from executors.transcripts.history import HistoryEntry, RecordStatus

from .. import theme
from .highlight import format_clock
from .placeholder import PlaceholderMixin

COL_DATE, COL_FILE, COL_DURATION, COL_LANGUAGE, COL_STATUS = range(5)
_ID_ROLE = Qt.ItemDataRole.UserRole

_STATUS_ICONS = {
    RecordStatus.DONE: QStyle.StandardPixmap.SP_DialogApplyButton,
    RecordStatus.RUNNING: QStyle.StandardPixmap.SP_BrowserReload,
    RecordStatus.FAILED: QStyle.StandardPixmap.SP_MessageBoxWarning,
    RecordStatus.CANCELLED: QStyle.StandardPixmap.SP_MediaStop,
    RecordStatus.INTERRUPTED: QStyle.StandardPixmap.SP_MessageBoxInformation,
}


class HistoryList(PlaceholderMixin, QTreeWidget):
    recordActivated = Signal(int)
    deleteRequested = Signal(int)
    indexRequested = Signal(int)

    placeholder_text = "Finished transcripts are kept here, newest first"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setColumnCount(5)
        self.setHeaderLabels(["Date", "File", "Length", "Lang", "Status"])
        self.headerItem().setToolTip(COL_LANGUAGE, "Language")
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(COL_FILE, QHeaderView.ResizeMode.Stretch)
        for col in (COL_DATE, COL_DURATION, COL_LANGUAGE, COL_STATUS):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.itemActivated.connect(lambda item, _col: self.recordActivated.emit(item.data(COL_DATE, _ID_ROLE)))

    def set_entries(self, entries: list[HistoryEntry]) -> None:
        selected = self.selected_record()
        self.clear()
        for e in entries:
            created = dt.datetime.fromtimestamp(e.created)
            when = created.strftime("%H:%M" if created.date() == dt.date.today() else "%d %b %H:%M")
            item = QTreeWidgetItem([when, e.name, format_clock(e.duration), e.language or "–", e.status.value])
            item.setData(COL_DATE, _ID_ROLE, e.id)
            item.setData(COL_FILE, _ID_ROLE, e.segment_count > 0 and e.status is not RecordStatus.RUNNING)
            item.setToolTip(COL_DATE, created.strftime("%Y-%m-%d %H:%M:%S"))
            item.setToolTip(COL_FILE, e.source)
            item.setToolTip(COL_STATUS, e.error or f"{e.segment_count} segments")
            item.setIcon(COL_FILE, theme.icon("dictation" if e.kind == "dictation" else "transcribe", 16))
            item.setIcon(COL_STATUS, self.style().standardIcon(_STATUS_ICONS[e.status]))
            self.addTopLevelItem(item)
            if e.id == selected:
                item.setSelected(True)
        self.viewport().update()

    def record_ids(self) -> list[int]:
        return [self.topLevelItem(i).data(COL_DATE, _ID_ROLE) for i in range(self.topLevelItemCount())]

    def row_text(self, record_id: int) -> list[str]:
        item = self._item(record_id)
        if item is None:
            raise KeyError(record_id)
        return [item.text(c) for c in range(self.columnCount())]

    def has_text(self, record_id: int) -> bool:
        """Whether the record has segments to open, search or export."""
        item = self._item(record_id)
        return bool(item is not None and item.data(COL_FILE, _ID_ROLE))

    def name_of(self, record_id: int) -> str:
        return self._item(record_id).text(COL_FILE) if self._item(record_id) else str(record_id)

    def remove_entry(self, record_id: int) -> None:
        item = self._item(record_id)
        if item is not None:
            self.takeTopLevelItem(self.indexOfTopLevelItem(item))
            self.viewport().update()

    def _item(self, record_id: int) -> QTreeWidgetItem | None:
        return next((self.topLevelItem(i) for i in range(self.topLevelItemCount())
                     if self.topLevelItem(i).data(COL_DATE, _ID_ROLE) == record_id), None)

    def selected_record(self) -> int | None:
        items = self.selectedItems()
        return items[0].data(COL_DATE, _ID_ROLE) if items else None

    def contextMenuEvent(self, event):
        item = self.itemAt(event.pos())
        if item is None:
            return
        record_id = item.data(COL_DATE, _ID_ROLE)
        menu = QMenu(self)
        S = QStyle.StandardPixmap
        menu.addAction(self.style().standardIcon(S.SP_DialogOpenButton), "Open",
                       lambda: self.recordActivated.emit(record_id))
        searchable = menu.addAction(self.style().standardIcon(S.SP_FileDialogContentsView), "Add to search",
                                    lambda: self.indexRequested.emit(record_id))
        searchable.setEnabled(bool(item.data(COL_FILE, _ID_ROLE)))  # nothing to search in a failed job
        menu.addSeparator()
        menu.addAction(self.style().standardIcon(S.SP_TrashIcon), "Delete\tDel",
                       lambda: self.deleteRequested.emit(record_id))
        menu.exec(event.globalPos())

    def keyPressEvent(self, event):
        if event.key() == Qt.Key.Key_Delete and self.selected_record() is not None:
            self.deleteRequested.emit(self.selected_record())
            return
        super().keyPressEvent(event)
