"""The panels of the main window, in order (Ctrl+1, Ctrl+2, … follow this order).

A panel is a QWidget built as ``Panel(host, parent=None)``; it only connects to the host.
Optional hooks the main window uses when a panel has them:
``enqueue(paths)`` (dropped/opened files), ``focus_search()`` (Ctrl+F), ``shutdown()`` (on close).
A new panel is a line in ``PANELS`` (or ``register_panel(PanelSpec(...), before="monitor")`` called
before the main window is built, e.g. by a plugin).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class PanelSpec:
    key: str         # stable id: "transcribe", "search", "dictation", "monitor"
    title: str       # shown in the navigation list
    icon: str        # resources/icons/<icon>.svg, or a QStyle "SP_*" name
    module: str      # imported when the window is built, never at app import
    class_name: str
    tooltip: str = ""

    def load(self):
        return getattr(importlib.import_module(self.module), self.class_name)


PANELS: list[PanelSpec] = [
    PanelSpec("transcribe", "Transcribe", "transcribe", "ferrum_gui.panels.transcribe_panel", "TranscribePanel",
              "Transcribe audio and video files"),
    PanelSpec("search", "Search", "search", "ferrum_gui.panels.search_panel", "SearchPanel",
              "Search your documents and transcripts by meaning"),
    PanelSpec("dictation", "Dictation", "dictation", "ferrum_gui.panels.dictation_panel", "DictationPanel",
              "Live dictation from the microphone"),
    PanelSpec("monitor", "Monitor", "monitor", "ferrum_gui.panels.monitor_panel", "MonitorPanel",
              "Model state, counters and live performance plots"),
]


def register_panel(spec: PanelSpec, before: str | None = None) -> None:
    """Add a panel (replacing one with the same key); ``before`` puts it ahead of that panel."""
    PANELS[:] = [p for p in PANELS if p.key != spec.key]
    keys = [p.key for p in PANELS]
    PANELS.insert(keys.index(before) if before in keys else len(PANELS), spec)
