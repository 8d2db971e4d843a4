"""Panel actions: an icon, a shortcut scoped to the panel, and the shortcut shown in the tooltip."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QStyle, QWidget


def panel_action(panel: QWidget, text: str, shortcut: str, icon: QStyle.StandardPixmap, slot) -> QAction:
    action = QAction(panel.style().standardIcon(icon), text, panel)
    sequence = QKeySequence(shortcut)
    action.setShortcut(sequence)
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.setToolTip(f"{text} ({sequence.toString(QKeySequence.SequenceFormat.NativeText)})")
    action.triggered.connect(lambda _checked=False: slot())
    panel.addAction(action)
    return action
