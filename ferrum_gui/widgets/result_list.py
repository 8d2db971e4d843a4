"""Search results, one card per document: its name and folder, how relevant it is in words, and
its best passages, each shown around its best match with the matched words highlighted (a
transcript's passages with the time of the segment holding the match).

Cards are item widgets whose row height follows the list's width. The list keeps its own record
of the cards it has built: Qt may resize the viewport while rows are still being inserted (a
scroll bar appearing or going), and a resize then must only touch cards that exist.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPalette
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
from .elided_label import ElidedLabel
from .highlight import format_clock, highlight_html, query_terms
from .placeholder import PlaceholderMixin

if TYPE_CHECKING:  # executors.search imports torch: not before the window is up
    from executors.search.grouping import DocumentResult

SNIPPET_CHARS = 320
MORE_CHARS = 160
PASSAGES_SHOWN = 3


def transcript_record_id(hit: Any) -> int | None:
    """The history record a transcript hit came from, or None for a file hit."""
    from executors.search.transcripts import transcript_record_id as record_of

    rid = getattr(hit, "record_id", None)
    return int(rid) if rid is not None else record_of(str(getattr(hit, "source", "")))


class _DocumentCard(QWidget):
    """One document: a header (icon, name, folder, relevance) over its best passages."""

    passageActivated = Signal(object)  # the SearchHit of a clicked passage time

    def __init__(self, result: DocumentResult, query: str, parent=None):
        from executors.search.matching import excerpt

        super().__init__(parent)
        self.result = result
        is_transcript = result.record_id is not None or result.doc_kind.value == "transcript"
        icon = QLabel()
        kind = (theme.icon("transcribe", 16) if is_transcript
                else self.style().standardIcon(QStyle.StandardPixmap.SP_FileIcon))
        icon.setPixmap(kind.pixmap(16, 16))
        self.name = QLabel(result.name)
        self.name.setStyleSheet("font-weight:600;")
        self.name.setToolTip(result.path or result.source)
        self.folder = ElidedLabel(result.folder, mode=Qt.TextElideMode.ElideMiddle)
        self.folder.setObjectName("PanelSubtitle")
        self.folder.setStyleSheet("padding:0;")
        rel = result.relevance
        self.meter = QProgressBar()
        self.meter.setRange(0, 100)
        self.meter.setValue(round(100 * rel.fraction))
        self.meter.setTextVisible(False)
        self.meter.setFixedSize(48, 8)
        track = self.meter.palette()  # the empty part: lighter than the card, or a dark palette hides it
        track.setColor(QPalette.ColorRole.Base, track.color(QPalette.ColorRole.Base).lighter(200))
        self.meter.setPalette(track)
        self.relevance = QLabel(rel.label)
        for widget in (self.meter, self.relevance):
            widget.setToolTip(rel.detail)
        header = QHBoxLayout()
        header.setSpacing(8)
        header.addWidget(icon)
        header.addWidget(self.name)
        header.addWidget(self.folder, 1)
        header.addWidget(self.meter)
        header.addWidget(self.relevance)

        column = QVBoxLayout(self)
        column.setContentsMargins(10, 8, 10, 8)
        column.setSpacing(3)
        column.addLayout(header)
        self.passages: list[QLabel] = []
        shown = result.hits[:PASSAGES_SHOWN]
        for i, hit in enumerate(shown):
            terms = list(hit.matched_terms or []) or query_terms(query)
            text = highlight_html(excerpt(hit.text, hit.match_span, SNIPPET_CHARS if i == 0 else MORE_CHARS), terms)
            if hit.start_time is not None:  # the time of the segment that holds the match
                text = f'<a href="{i}">{html.escape(format_clock(hit.focus_time))}</a>&nbsp;&nbsp;{text}'
            label = QLabel(text)
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setWordWrap(True)
            label.linkActivated.connect(lambda href, hits=shown: self.passageActivated.emit(hits[int(href)]))
            if hit.start_time is not None:
                label.setToolTip("Click the time to open the transcript there")
            self.passages.append(label)
            column.addWidget(label)
        more = len(result.hits) - len(shown)
        self.more = QLabel(f"+ {more} more passage{'s' if more > 1 else ''} in this document" if more > 0 else "")
        self.more.setObjectName("PanelSubtitle")
        self.more.setVisible(more > 0)
        column.addWidget(self.more)


class ResultList(PlaceholderMixin, QListWidget):
    """``resultActivated(hit)`` on double-click / Enter (the document's best passage) or on a
    passage's time."""

    resultActivated = Signal(object)

    placeholder_text = "Type to search your indexed files and transcripts"

    def __init__(self, parent=None):
        super().__init__(parent)
        self._results: list[DocumentResult] = []
        self._cards: list[tuple[QListWidgetItem, _DocumentCard]] = []
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setAlternatingRowColors(True)
        self.itemActivated.connect(lambda item: self.resultActivated.emit(self._results[self.row(item)].best))

    def set_results(self, hits: list[Any], query: str = "", empty_text: str | None = None,
                    limit: int | None = None) -> None:
        """Show ``hits`` grouped per document (at most ``limit`` documents)."""
        from executors.search.grouping import group_hits

        self.set_documents(group_hits(list(hits), limit), query, empty_text)

    def set_documents(self, results: list[DocumentResult], query: str = "", empty_text: str | None = None) -> None:
        self._cards = []
        self.clear()
        self._results = list(results)
        for result in self._results:
            card = _DocumentCard(result, query)
            card.passageActivated.connect(self.resultActivated)
            item = QListWidgetItem()
            self.addItem(item)
            self.setItemWidget(item, card)
            self._cards.append((item, card))
        self._fit_rows()
        if empty_text is not None:
            self.set_placeholder(empty_text)
        self.viewport().update()

    def _fit_rows(self) -> None:
        """Word-wrapped snippets need the row height for the current width."""
        width = self.viewport().width()
        for item, card in self._cards:
            item.setSizeHint(QSize(width, card.layout().totalHeightForWidth(width)))

    def resizeEvent(self, event):
        super().resizeEvent(event)
        self._fit_rows()

    # --- read-back (tests, screenshots) -------------------------------------------------------

    def documents(self) -> list[DocumentResult]:
        return list(self._results)

    def hits(self) -> list[Any]:
        """The best hit of each document, in display order."""
        return [r.best for r in self._results]

    def card(self, row: int) -> _DocumentCard:
        return self._cards[row][1]

    def snippet_html(self, row: int) -> str:
        return self.card(row).passages[0].text()

    def source_text(self, row: int) -> str:
        return self.card(row).name.text()

    def folder_text(self, row: int) -> str:
        return self.card(row).folder.full_text()

    def relevance_text(self, row: int) -> str:
        return self.card(row).relevance.text()

    def activate_row(self, row: int) -> None:
        self.setCurrentRow(row)
        self.resultActivated.emit(self._results[row].best)

