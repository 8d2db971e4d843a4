"""A read-only table that updates cells in place (no flicker, no lost selection at 2 Hz refresh)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from .placeholder import PlaceholderMixin


class DataTable(PlaceholderMixin, QTableWidget):
    def __init__(self, headers: list[str], placeholder: str = "", parent=None, stretch_last: bool = True,
                 fit_rows: int | None = None, stretch: bool = False):
        """``fit_rows``: size the table to its rows (at least that many) instead of scrolling;
        ``stretch``: share the width among the columns instead of sizing them to their contents."""
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
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch if stretch
                                    else QHeaderView.ResizeMode.ResizeToContents)
        if stretch:
            self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header.setStretchLastSection(stretch_last)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.placeholder_text = placeholder
        self._fit_rows = fit_rows
        if fit_rows is not None:
            self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            self._fit()

    def _fit(self) -> None:
        rows = max(self._fit_rows, self.rowCount())
        head = self.horizontalHeader()
        header = max(head.sizeHint().height(), head.height()) if not head.isHidden() else 0
        self.setFixedHeight(rows * self.verticalHeader().defaultSectionSize() + header + 2 * self.frameWidth() + 4)

    def showEvent(self, event):  # noqa: N802 - the header knows its real height once shown
        super().showEvent(event)
        if self._fit_rows is not None:
            self._fit()

    def set_rows(self, rows: list[list[str]]) -> None:
        if self.rowCount() != len(rows):
            self.setRowCount(len(rows))
            if self._fit_rows is not None:
                self._fit()
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
    """Property/value pairs laid out ``per_row`` pairs to a row; ``value(key)`` reads one back."""

    def __init__(self, placeholder: str = "", parent=None, per_row: int = 1, fit_rows: int | None = None):
        super().__init__(["Property", "Value"] * per_row, placeholder, parent, fit_rows=fit_rows)
        self.per_row = per_row
        self.horizontalHeader().hide()
        if fit_rows is not None:
            self._fit()  # again: the hidden header no longer takes room
        bold = self.font()
        bold.setBold(True)
        self._key_font = bold

    def set_pairs(self, pairs: list[tuple[str, str]]) -> None:
        rows = []
        for i in range(0, len(pairs), self.per_row):
            chunk = pairs[i:i + self.per_row]
            row = [text for pair in chunk for text in pair]
            rows.append(row + [""] * (2 * self.per_row - len(row)))
        self.set_rows(rows)
        for r in range(self.rowCount()):
            for c in range(0, self.columnCount(), 2):
                item = self.item(r, c)
                if item is not None and item.font() != self._key_font:
                    item.setFont(self._key_font)

    def value(self, key: str) -> str | None:
        for r in range(self.rowCount()):
            for c in range(0, self.columnCount(), 2):
                if self.cell_text(r, c) == key:
                    return self.cell_text(r, c + 1)
        return None
