"""The main window's actions and menus: File, Edit (with the shown panel's own edit actions), View
(panels and the theme), Help (log folder, About)."""

from __future__ import annotations

from PySide6.QtGui import QAction, QActionGroup, QKeySequence

from .. import theme
from .about import open_log_folder, show_about

THEME_KEY = "appearance/theme"


def build_menus(window) -> None:
    """Create the window's actions (as attributes) and its menu bar."""
    act = window.make_action
    window.open_action = act("&Open…", "SP_DialogOpenButton", QKeySequence.StandardKey.Open, window.open_files,
                             "Add audio or video files to the transcription queue")
    window.open_folder_action = act("Open &Folder…", "SP_DirOpenIcon", QKeySequence("Ctrl+Alt+O"), window.open_folder,
                                    "Add every audio and video file of a folder (and its subfolders) to the queue")
    window.preferences_action = act("&Preferences…", "settings", QKeySequence("Ctrl+,"), window.show_preferences,
                                    "Devices, models and threads")
    window.preferences_action.setMenuRole(QAction.MenuRole.PreferencesRole)
    window.quit_action = act("&Quit", "SP_DialogCloseButton", QKeySequence("Ctrl+Q"), window.close)
    window.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
    window.find_action = act("&Find…", "search", QKeySequence.StandardKey.Find, window.focus_search,
                             "Search your documents and transcripts")
    window.panel_actions = [act(spec.title, spec.icon, QKeySequence(f"Ctrl+{n}") if n < 10 else None,
                                lambda _=False, key=spec.key: window.show_panel(key), spec.tooltip)
                            for n, spec in enumerate(window.specs, start=1)]
    window.log_action = act("Open &Log Folder", "SP_DirOpenIcon", None, lambda: _open_logs(window),
                            "Show the folder with the app's log files (attach them to a bug report)")
    window.about_action = act("&About Ferrum Desktop", "SP_MessageBoxInformation", None,
                              lambda: show_about(window))
    window.about_action.setMenuRole(QAction.MenuRole.AboutRole)

    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addActions([window.open_action, window.open_folder_action])
    file_menu.addSeparator()
    file_menu.addAction(window.quit_action)
    window.edit_menu = bar.addMenu("&Edit")
    window.edit_menu.aboutToShow.connect(lambda: _fill_edit_menu(window))
    _fill_edit_menu(window)
    view_menu = bar.addMenu("&View")
    view_menu.addActions(window.panel_actions)
    view_menu.addSeparator()
    window.theme_actions = _theme_menu(window, view_menu.addMenu("&Theme"))
    help_menu = bar.addMenu("&Help")
    help_menu.addActions([window.log_action, window.about_action])


def _fill_edit_menu(window) -> None:
    """The shown panel's edit actions (undo, redo, revert of transcript edits), then Find and Preferences."""
    menu = window.edit_menu
    menu.clear()
    panel = window.panels.get(window.current_panel_key() or "")
    own = getattr(panel, "edit_actions", None)
    if own is not None:
        menu.addActions(own())
        menu.addSeparator()
    menu.addAction(window.find_action)
    menu.addSeparator()
    menu.addAction(window.preferences_action)


def _theme_menu(window, menu) -> dict[str, QAction]:
    group = QActionGroup(window)
    actions = {}
    chosen = str(window.qsettings.value(THEME_KEY, "system")) if window.qsettings is not None else theme.current_theme()
    for key, title in theme.THEMES.items():
        action = QAction(title, window, checkable=True)
        action.setChecked(key == chosen)
        action.triggered.connect(lambda _=False, key=key: choose_theme(window, key))
        group.addAction(action)
        menu.addAction(action)
        actions[key] = action
    return actions


def choose_theme(window, key: str) -> None:
    """Switch the theme now and remember it."""
    theme.set_theme(key)
    window.theme_actions[key].setChecked(True)
    if window.qsettings is not None:
        window.qsettings.setValue(THEME_KEY, key)


def _open_logs(window) -> None:
    if not open_log_folder():
        from executors.core.paths import log_dir

        window.notifications.notify(f"The log files are in {log_dir()}",
                                    "no file manager is set up to open folders here", "info")
