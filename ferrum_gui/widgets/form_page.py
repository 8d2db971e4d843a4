"""The layout every preferences page shares: a form, then a wrapped explanatory note."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget


def lay_out_form_page(page: QWidget, form: QFormLayout, note: str) -> QLabel:
    label = QLabel(note)
    label.setObjectName("PanelSubtitle")
    label.setWordWrap(True)
    column = QVBoxLayout(page)
    column.setContentsMargins(0, 0, 0, 0)
    column.addLayout(form)
    column.addSpacing(8)
    column.addWidget(label)
    column.addStretch(1)
    return label
