"""Search results: a score bar, the source, and a snippet with the matched words highlighted."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from .. import theme
from .highlight import format_clock, highlight_html, query_terms
from .placeholder import PlaceholderMixin

SNIPPET_CHARS = 320
_TRANSCRIPT_SOURCE = re.compile(r"^(?:transcript|history)[:#/](\d+)$")


def transcript_record_id(hit: Any) -> int | None:
    """The history record a transcript hit came from, or None for a file hit."""
    rid = getattr(hit, "record_id", None)
    if rid is not None:
        return int(rid)
    if getattr(hit, "doc_kind", "") != "transcript":
        return None
    m = _TRANSCRIPT_SOURCE.match(str(getattr(hit, "source", "")))
    return int(m.group(1)) if m else None


def snippet(text: str, terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the first matched term, with ellipses where it was cut."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lower = flat.lower()
    hits = [lower.find(t.lower()) for t in terms if t and lower.find(t.lower()) >= 0]
    start = max(0, min(hits) - width // 4) if hits else 0
    start = min(start, len(flat) - width)
    if start > 0 and flat[start - 1] != " ":  # begin and end on whole words
        start = flat.find(" ", start) + 1 or start
    end = start + width
    if end < len(flat) and flat[end] != " ":
        end = flat.rfind(" ", start, end) if flat.rfind(" ", start, end) > start else end
    out = flat[start:end]
    width = end - start
    return ("…" if start > 0 else "") + out + ("…" if start + width < len(flat) else "")


class _ResultRow(QWidget):
    def __init__(self, hit: Any, terms: list[str], best: float, parent=None):
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(10)
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setValue(round(100 * hit.score / best) if best > 0 else 0)
        self.bar.setFormat(f"{hit.score:.3f}")
        self.bar.setFixedWidth(72)
        self.bar.setMaximumHeight(16)
        self.bar.setToolTip("Score relative to the best result")
        icon = QLabel()
        kind = (theme.icon("transcribe", 16) if transcript_record_id(hit) is not None
                else self.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon))
        icon.setPixmap(kind.pixmap(16, 16))
        layout.addWidget(self.bar, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        text_box = QVBoxLayout()
        text_box.setSpacing(2)
        self.source = QLabel(_source_text(hit))
        self.source.setStyleSheet("font-weight:600;")
        self.source.setToolTip(str(getattr(hit, "source", "")))
        self.snippet = QLabel(highlight_html(snippet(hit.text, terms), terms))
        self.snippet.setTextFormat(Qt.TextFormat.RichText)
        self.snippet.setWordWrap(True)
        text_box.addWidget(self.source)
        text_box.addWidget(self.snippet)
        layout.addLayout(text_box, 1)


def _source_text(hit: Any) -> str:
    rid = transcript_record_id(hit)
    if rid is not None or getattr(hit, "doc_kind", "") == "transcript":
        start = getattr(hit, "start_time", None)
        title = Path(getattr(hit, "title", "") or "").name or f"Transcript #{rid}"
        return f"{title}  ·  {format_clock(start)}" if start is not None else title
    source = str(getattr(hit, "source", ""))
    return Path(source).name or source


class ResultList(PlaceholderMixin, QListWidget):
    """``resultActivated(hit)`` on double-click / Enter."""

    resultActivated = Signal(object)

    placeholder_text = "Type to search your indexed files and transcripts"

    def __init__(self, parent=None):
        super().__init__(parent)
        self._hits: list[Any] = []
        self._terms: list[list[str]] = []
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setAlternatingRowColors(True)
        self.itemActivated.connect(lambda item: self.resultActivated.emit(self._hits[self.row(item)]))

    def set_results(self, hits: list[Any], query: str = "", empty_text: str | None = None) -> None:
        self.clear()
        self._hits = list(hits)
        self._terms = []
        best = max((h.score for h in hits), default=0.0)
        for hit in hits:
            terms = list(getattr(hit, "matched_terms", None) or []) or query_terms(query)
            self._terms.append(terms)
            row = _ResultRow(hit, terms, best)
            item = QListWidgetItem(self)
            self.setItemWidget(item, row)
        self._fit_rows()
        if empty_text is not None:
            self.set_placeholder(empty_text)
        self.viewport().update()

    def _fit_rows(self) -> None:
        """Word-wrapped snippets need the row height for the current width."""
        width = self.viewport().width()
        for i in range(self.count()):
            item = self.item(i)
            row = self.itemWidget(item)
            item.setSizeHint(QSize(width, row.layout().totalHeightForWidth(width)))

    def resizeEvent(self, event):
        super().resizeEvent(event)
        self._fit_rows()

    def hits(self) -> list[Any]:
        return list(self._hits)

    def snippet_html(self, row: int) -> str:
        return self.itemWidget(self.item(row)).snippet.text()

    def source_text(self, row: int) -> str:
        return self.itemWidget(self.item(row)).source.text()

    def score_value(self, row: int) -> int:
        return self.itemWidget(self.item(row)).bar.value()

    def activate_row(self, row: int) -> None:
        self.setCurrentRow(row)
        self.resultActivated.emit(self._hits[row])
