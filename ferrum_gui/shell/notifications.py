"""The notification area: non-modal cards for errors and notices at the top of the window.

Every background failure arrives here through ``host.failure``. A card shows the error's message
and its hint, can be dismissed, and repeats of the same message bump a counter instead of stacking.
An unexpected error (a bug) says so and offers to open the log folder, where its traceback is.
Only the newest card shows; a line under it counts the others and shows them all on demand, so a
burst of notices does not push the panel down.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from executors.core.errors import ErrorKind, FerrumError

from .about import open_log_folder

MAX_VISIBLE = 1  # cards shown until the user asks for all
BUG_HINT = ("This is a bug in Ferrum Desktop. The log has the details: Help → Open Log Folder "
            "(attach ferrum.log to a bug report).")
_ICONS = {"error": QStyle.StandardPixmap.SP_MessageBoxCritical,
          "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
          "info": QStyle.StandardPixmap.SP_MessageBoxInformation}


class Notification(QWidget):
    dismissed = Signal(object)

    def __init__(self, level: str, message: str, hint: str | None, parent: QWidget | None = None,
                 action: tuple[str, Callable[[], object]] | None = None):
        """``action``: (button text, callback) for a link button on the card, e.g. to open the log."""
        super().__init__(parent)
        self.setObjectName("Notification")
        self.setProperty("level", level)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.level, self.message, self.hint, self.repeats = level, message, hint, 1

        icon = QLabel()
        icon.setPixmap(self.style().standardIcon(_ICONS[level]).pixmap(QSize(22, 22)))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.title = QLabel(message)
        self.title.setObjectName("NotificationTitle")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hint_label = QLabel(hint or "")
        self.hint_label.setObjectName("NotificationHint")
        self.hint_label.setWordWrap(True)
        self.hint_label.setVisible(bool(hint))
        text = QVBoxLayout()
        text.setSpacing(2)
        text.addWidget(self.title)
        text.addWidget(self.hint_label)
        self.action_button = None
        if action is not None:
            self.action_button = QPushButton(action[0])
            self.action_button.setFlat(True)
            self.action_button.setCursor(Qt.CursorShape.PointingHandCursor)
            self.action_button.clicked.connect(lambda: action[1]())
            text.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignLeft)
        close = QToolButton()
        close.setAutoRaise(True)
        close.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_TitleBarCloseButton))
        close.setToolTip("Dismiss")
        close.setAccessibleName("Dismiss notification")
        close.clicked.connect(self.dismiss)
        self.close_button = close

        row = QHBoxLayout(self)
        row.setContentsMargins(10, 8, 6, 8)
        row.setSpacing(10)
        row.addWidget(icon)
        row.addLayout(text, 1)
        row.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

    def repeat(self) -> None:
        self.repeats += 1
        self.title.setText(f"{self.message}  (×{self.repeats})")

    def dismiss(self) -> None:
        self.dismissed.emit(self)


class NotificationArea(QWidget):
    """Stacks notifications, newest on top, the older ones folded away; hidden while empty."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._cards: list[Notification] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(12, 8, 12, 0)
        self._layout.setSpacing(6)
        self._more = QLabel()
        self._more.setObjectName("NotificationHint")
        self.expand_button = QPushButton()
        self.expand_button.setFlat(True)
        self.expand_button.setCheckable(True)
        self.expand_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.expand_button.toggled.connect(lambda _on: self._relayout())
        self.dismiss_all_button = QPushButton("Dismiss all")
        self.dismiss_all_button.setFlat(True)
        self.dismiss_all_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.dismiss_all_button.clicked.connect(self.clear)
        self._fold = QWidget()
        row = QHBoxLayout(self._fold)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self._more)
        row.addWidget(self.expand_button)
        row.addWidget(self.dismiss_all_button)
        row.addStretch(1)
        self._layout.addWidget(self._fold)
        self._fold.hide()
        self.hide()

    def show_error(self, error: BaseException) -> Notification:
        """Show a FerrumError (or any exception) with its hint; an unexpected error (a bug) points to
        the log, which has its traceback."""
        if isinstance(error, FerrumError) and error.kind is not ErrorKind.INTERNAL:
            return self.notify(error.message, error.hint, "error")
        message = error.message if isinstance(error, FerrumError) else (str(error) or type(error).__name__)
        return self.notify(message, BUG_HINT, "error", action=("Open log folder", open_log_folder))

    def notify(self, message: str, hint: str | None = None, level: str = "info",
               timeout_ms: int | None = None, action: tuple[str, Callable[[], object]] | None = None) -> Notification:
        """Add a card (or count a repeat of the same one); ``timeout_ms`` auto-dismisses it."""
        for card in self._cards:
            if (card.message, card.hint, card.level) == (message, hint, level):
                card.repeat()
                self._move_to_top(card)
                return card
        card = Notification(level, message, hint, self, action)
        card.dismissed.connect(self._remove)
        self._cards.insert(0, card)
        self._layout.insertWidget(0, card)
        if timeout_ms:
            timer = QTimer(card)  # goes with the card
            timer.setSingleShot(True)
            timer.timeout.connect(card.dismiss)
            timer.start(timeout_ms)
        self._relayout()
        return card

    def notifications(self) -> list[Notification]:
        return list(self._cards)

    def messages(self) -> list[str]:
        return [card.message for card in self._cards]

    def clear(self) -> None:
        for card in list(self._cards):
            self._remove(card)

    def _move_to_top(self, card: Notification) -> None:
        self._cards.remove(card)
        self._cards.insert(0, card)
        self._layout.removeWidget(card)
        self._layout.insertWidget(0, card)
        self._relayout()

    def _remove(self, card: Notification) -> None:
        if card in self._cards:
            self._cards.remove(card)
            self._layout.removeWidget(card)
            card.deleteLater()
            self._relayout()

    def _relayout(self) -> None:
        folded = len(self._cards) - MAX_VISIBLE
        if folded <= 0 and self.expand_button.isChecked():
            self.expand_button.setChecked(False)  # comes back here
            return
        expanded = self.expand_button.isChecked()
        for i, card in enumerate(self._cards):
            card.setVisible(expanded or i < MAX_VISIBLE)
        self._more.setText(f"{len(self._cards)} notifications" if expanded
                           else f"{folded} more notification{'s' if folded > 1 else ''}")
        self.expand_button.setText("Show fewer" if expanded else "Show all")
        self._fold.setVisible(folded > 0)
        self.setVisible(bool(self._cards))
        self.changed.emit()
