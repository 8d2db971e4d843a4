"""Live time-series plots over the last few minutes (pyqtgraph, imported when first shown)."""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass

from PySide6.QtCore import QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

WINDOW_S = 300.0


@dataclass(frozen=True)
class SeriesSpec:
    key: str      # the ``host.sample`` series name
    title: str
    unit: str = ""
    points: bool = False  # mark each sample (for sparse series such as one value per job)


class SeriesBuffer:
    """Timestamped samples, dropping those older than the window."""

    def __init__(self, window_s: float = WINDOW_S):
        self.window_s = window_s
        self._points: collections.deque[tuple[float, float]] = collections.deque()

    def add(self, value: float, when: float | None = None) -> None:
        self._points.append((time.monotonic() if when is None else when, float(value)))
        self._trim()

    def _trim(self) -> None:
        cutoff = time.monotonic() - self.window_s
        while self._points and self._points[0][0] < cutoff:
            self._points.popleft()

    def xy(self) -> tuple[list[float], list[float]]:
        """Seconds relative to now (negative) and values."""
        self._trim()
        now = time.monotonic()
        return [t - now for t, _ in self._points], [v for _, v in self._points]

    def __len__(self) -> int:
        return len(self._points)


class LivePlots(QWidget):
    """A grid of small plots, one per series; redrawn once a second while visible."""

    COLUMNS = 3
    ROW_HEIGHT = 200

    def __init__(self, specs: list[SeriesSpec], parent: QWidget | None = None, refresh_ms: int = 1000):
        super().__init__(parent)
        self.specs = list(specs)
        self.buffers = {spec.key: SeriesBuffer() for spec in self.specs}
        self._curves: dict = {}
        self._graphics = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._loading = QLabel("Plots appear here…")
        self._layout.addWidget(self._loading)
        self._timer = QTimer(self)
        self._timer.setInterval(refresh_ms)
        self._timer.timeout.connect(self.refresh)

    def add_series(self, spec: SeriesSpec) -> None:
        """Add a plot (used by panels that bring their own series, e.g. dictation latency)."""
        if spec.key in self.buffers:
            return
        self.specs.append(spec)
        self.buffers[spec.key] = SeriesBuffer()
        if self._graphics is not None:
            self._add_plot(spec, len(self.specs) - 1)

    def record(self, key: str, value: float) -> None:
        buffer = self.buffers.get(key)
        if buffer is not None:
            buffer.add(value)

    def showEvent(self, event):  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._graphics is None:
            self._build()
        self._timer.start()
        self.refresh()

    def hideEvent(self, event):  # noqa: N802
        self._timer.stop()
        super().hideEvent(event)

    def _build(self) -> None:
        import pyqtgraph as pg

        palette = self.palette()
        pg.setConfigOptions(antialias=True, background=palette.color(QPalette.ColorRole.Base),
                            foreground=palette.color(QPalette.ColorRole.Text))
        self._graphics = pg.GraphicsLayoutWidget()
        self._pen = pg.mkPen(palette.color(QPalette.ColorRole.Highlight), width=2)
        self._brush = pg.mkBrush(palette.color(QPalette.ColorRole.Highlight))
        self._loading.hide()
        self._layout.addWidget(self._graphics)
        for i, spec in enumerate(self.specs):
            self._add_plot(spec, i)

    def _fit_height(self) -> None:
        rows = -(-len(self.specs) // self.COLUMNS)
        self._graphics.setMinimumHeight(rows * self.ROW_HEIGHT)

    def _add_plot(self, spec: SeriesSpec, index: int) -> None:
        self._fit_height()
        plot = self._graphics.addPlot(row=index // self.COLUMNS, col=index % self.COLUMNS)
        plot.setTitle(spec.title + (f" ({spec.unit})" if spec.unit else ""), size="9pt")
        plot.setXRange(-WINDOW_S, 0, padding=0.01)
        plot.setLimits(xMin=-WINDOW_S, xMax=0)
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.setMouseEnabled(x=False, y=False)
        plot.hideButtons()
        plot.getAxis("bottom").setLabel("seconds ago")
        plot.enableAutoRange(axis="y")
        symbols = dict(symbol="o", symbolSize=6, symbolBrush=self._brush, symbolPen=None) if spec.points else {}
        self._curves[spec.key] = plot.plot([], [], pen=self._pen, **symbols)

    def refresh(self) -> None:
        if self._graphics is None:
            return
        for key, curve in self._curves.items():
            xs, ys = self.buffers[key].xy()
            curve.setData(xs, ys)
