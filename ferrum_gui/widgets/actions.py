"""Panel actions (an icon, a shortcut scoped to the panel, and the shortcut shown in the tooltip), and
the small button and box helpers panels build their rows with."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QGroupBox, QStyle, QToolButton, QVBoxLayout, QWidget


def panel_action(panel: QWidget, text: str, shortcut: str, icon: QStyle.StandardPixmap, slot) -> QAction:
    action = QAction(panel.style().standardIcon(icon), text, panel)
    sequence = QKeySequence(shortcut)
    action.setShortcut(sequence)
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.setToolTip(f"{text} ({sequence.toString(QKeySequence.SequenceFormat.NativeText)})")
    action.triggered.connect(lambda _checked=False: slot())
    panel.addAction(action)
    return action


def text_tool_button(parent: QWidget, text: str, icon: QStyle.StandardPixmap, tip: str, slot) -> QToolButton:
    """A tool button with its words beside its icon."""
    button = QToolButton()
    button.setText(text)
    button.setIcon(parent.style().standardIcon(icon))
    button.setToolTip(tip)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    button.clicked.connect(slot)
    return button


def group_box(title: str, widget: QWidget) -> QGroupBox:
    """``widget`` in a titled box."""
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(8, 8, 8, 8)
    layout.addWidget(widget)
    return box
