"""The smallest window still shows every word: shrinking the real main window below 800×600 stops at
its minimum size (half a 1920 px screen at most), where no button, box, check box or label of any panel
is cut, the search box keeps room for words, text that gives way ends in "…" with the full text in its
tooltip, and the Monitor's page is the only thing that scrolls."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from ferrum_gui.widgets.elided_label import ElidedLabel


def _cut_widgets(root: QWidget) -> list[str]:
    cut = []
    for widget in root.findChildren(QWidget):
        if not widget.isVisibleTo(root) or widget.width() <= 0:
            continue
        if isinstance(widget.parent(), QLineEdit):  # a line edit's own action icons, sized by the line edit
            continue
        if isinstance(widget, ElidedLabel):
            if widget.is_elided() and widget.toolTip() != widget.full_text():
                cut.append(f"elided without tooltip: {widget.full_text()!r}")
            continue
        label = isinstance(widget, QLabel) and widget.text() and not widget.wordWrap() and not widget.pixmap()
        if isinstance(widget, (QAbstractButton, QComboBox, QSpinBox)) or label:
            if widget.width() < widget.minimumSizeHint().width():
                text = getattr(widget, "text", lambda: "")() or getattr(widget, "currentText", lambda: "")()
                cut.append(f"{type(widget).__name__} {text!r}: {widget.width()} < {widget.minimumSizeHint().width()}")
    return cut


def test_nothing_is_cut_off_in_the_smallest_window(main_window):
    main_window.resize(800, 500)  # narrower and lower than it allows
    QApplication.processEvents()
    assert main_window.width() == main_window.minimumWidth() and main_window.height() == main_window.minimumHeight()
    assert main_window.minimumWidth() <= 960  # half of a 1920 px screen: two windows side by side
    for key in main_window.panel_keys():
        main_window.show_panel(key)
        QApplication.processEvents()
        assert _cut_widgets(main_window.panels[key]) == [], key
    assert _cut_widgets(main_window.statusBar()) == []

    search = main_window.show_panel("search")
    QApplication.processEvents()
    query: QLineEdit = search.query
    assert query.width() >= query.fontMetrics().horizontalAdvance("Search files and transcripts")

    transcribe = main_window.show_panel("transcribe")
    long_name = "a-very-long-recording-name-from-the-quarterly-all-hands-meeting-of-the-whole-company.wav — done"
    transcribe._set_title(long_name)
    QApplication.processEvents()
    title = transcribe.title
    assert title.is_elided() and "…" in title.shown_text() and title.toolTip() == long_name


def test_a_long_model_folder_name_is_shortened_in_the_middle(main_window):
    bar = main_window.show_panel("transcribe").options_bar
    folder = "/home/user/models/whisper-large-v3-turbo-ct2-int8-float16-quantised-by-hand"
    bar.set_models(["whisper-tiny.en"], folder)
    label = bar.model.currentText()
    assert label.endswith(" (folder)") and "…" in label
    assert label.startswith("whisper-lar") and "by-hand (folder)" in label  # both ends stay readable
    assert bar.model.itemData(0, Qt.ItemDataRole.ToolTipRole) == folder and folder in bar.model.toolTip()
    main_window.resize(800, 500)
    QApplication.processEvents()
    assert bar.model.width() >= bar.model.minimumSizeHint().width()


def test_queue_and_history_captions_are_whole(main_window):
    panel = main_window.show_panel("transcribe")
    main_window.resize(800, 500)
    QApplication.processEvents()
    for tree in (panel.jobs, panel.history):
        header = tree.header()
        for col in range(tree.columnCount()):
            caption = tree.headerItem().text(col)
            if caption and header.sectionResizeMode(col) != header.ResizeMode.Stretch:
                assert header.sectionSize(col) >= header.fontMetrics().horizontalAdvance(caption) + 6, caption


def test_the_monitor_scrolls_only_as_a_page_in_the_smallest_window(main_window, wait_until):
    main_window.resize(800, 500)
    monitor = main_window.show_panel("monitor")
    wait_until(lambda: monitor.value("whisper", "Model") and monitor.capabilities.rowCount())
    QApplication.processEvents()
    page = monitor.scroll
    assert not page.horizontalScrollBar().isVisible()
    inner = [area for area in page.widget().findChildren(QAbstractScrollArea) if area.isVisible()]
    assert inner, "the Monitor shows its tables and plots"
    scrolling = [type(area).__name__ for area in inner
                 if area.horizontalScrollBar().isVisible() or area.verticalScrollBar().isVisible()]
    assert scrolling == []
    assert page.verticalScrollBar().isVisible()  # the page itself scrolls to the rest
    for table in (monitor.cards["whisper"].table, monitor.caches):  # and nothing in it is cut
        assert table.width() >= table.minimumWidth() and table.viewport().width() >= table.horizontalHeader().length()
    plots = monitor.plots._graphics
    assert plots.ci.geometry().width() <= plots.viewport().width()  # every plot and its title whole

    main_window.resize(1800, 1000)
    QApplication.processEvents()
    assert monitor.columns == 2 and not page.horizontalScrollBar().isVisible()
