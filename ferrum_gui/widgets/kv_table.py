"""A read-only table that updates cells in place (no flicker, no lost selection at 2 Hz refresh)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from .placeholder import PlaceholderMixin


class DataTable(PlaceholderMixin, QTableWidget):
    def __init__(self, headers: list[str], placeholder: str = "", parent=None, stretch_last: bool = True):
        super().__init__(0, len(headers), parent)
        self.setHorizontalHeaderLabels(headers)
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.setWordWrap(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(stretch_last)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.placeholder_text = placeholder

    def set_rows(self, rows: list[list[str]]) -> None:
        if self.rowCount() != len(rows):
            self.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = self.item(r, c)
                if item is None:
                    self.setItem(r, c, QTableWidgetItem(str(text)))
                elif item.text() != str(text):
                    item.setText(str(text))

    def cell_text(self, row: int, column: int) -> str:
        item = self.item(row, column)
        return item.text() if item else ""

    def row_texts(self) -> list[list[str]]:
        return [[self.cell_text(r, c) for c in range(self.columnCount())] for r in range(self.rowCount())]


class KeyValueTable(DataTable):
    """Two columns, "Property" and "Value"; ``value(key)`` reads a row back."""

    def __init__(self, placeholder: str = "", parent=None):
        super().__init__(["Property", "Value"], placeholder, parent)
        self.horizontalHeader().hide()

    def set_pairs(self, pairs: list[tuple[str, str]]) -> None:
        self.set_rows([[k, v] for k, v in pairs])

    def value(self, key: str) -> str | None:
        for r in range(self.rowCount()):
            if self.cell_text(r, 0) == key:
                return self.cell_text(r, 1)
        return None
