"""Export of the shown transcript: the save dialog and where the file goes.

The extension typed decides the format (``notes.vtt`` is WebVTT whatever filter is selected); a
name without one takes the selected filter's. Switching the filter changes the extension of the
name in the box, and the folder and format used last are offered next time.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QFileDialog, QWidget

from executors.transcripts.exporters import FORMATS, export_target

EXPORT_FORMATS = {name: fmt.file_filter for name, fmt in FORMATS.items()}  # the save dialog's filters
DEFAULT_FORMAT = "srt"
_KEY = "transcribe/export"


def format_of_filter(name_filter: str) -> str | None:
    return next((fmt for fmt, flt in EXPORT_FORMATS.items() if flt == name_filter), None)


class ExportDialog(QFileDialog):
    """The save dialog; ``chosen(path, fmt)`` is emitted with the resolved target."""

    def __init__(self, parent: QWidget, stem: str, settings: QSettings | None):
        folder = str(settings.value(f"{_KEY}/folder", "")) if settings is not None else ""
        fmt = str(settings.value(f"{_KEY}/format", DEFAULT_FORMAT)) if settings is not None else DEFAULT_FORMAT
        fmt = fmt if fmt in EXPORT_FORMATS else DEFAULT_FORMAT
        start = Path(folder) if folder and Path(folder).is_dir() else Path.home()
        super().__init__(parent, "Export transcript", str(start / f"{stem}.{fmt}"), ";;".join(EXPORT_FORMATS.values()))
        self._settings = settings
        self.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        self.setFileMode(QFileDialog.FileMode.AnyFile)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.selectNameFilter(EXPORT_FORMATS[fmt])
        self.selectFile(f"{stem}.{fmt}")
        self.filterSelected.connect(self._follow_filter)

    def _follow_filter(self, name_filter: str) -> None:
        """Picking another filter changes the extension of a name that has a known one."""
        fmt = format_of_filter(name_filter)
        names = self.selectedFiles()
        if fmt is None or not names:
            return
        path = Path(names[0])
        if path.suffix.lower().lstrip(".") in EXPORT_FORMATS:
            self.selectFile(path.with_suffix(f".{fmt}").name)

    def target(self, path: str) -> tuple[Path, str]:
        """Where to write ``path`` (as the user typed it) and in which format; remembered for next time."""
        target, fmt = export_target(path, format_of_filter(self.selectedNameFilter()) or DEFAULT_FORMAT)
        if self._settings is not None:
            self._settings.setValue(f"{_KEY}/folder", str(target.parent))
            self._settings.setValue(f"{_KEY}/format", fmt)
        return target, fmt
