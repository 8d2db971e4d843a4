"""Live time-series plots over the last few minutes (pyqtgraph, imported when first shown)."""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass

from PySide6.QtCore import QEvent, Qt, QTimer
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
    """A grid of small plots, one per series; redrawn once a second while visible. Their background,
    axes and titles are the palette's, and follow a theme switch. The grid has as many columns (up to
    ``COLUMNS``) as fit the width with every title whole."""

    COLUMNS = 3
    ROW_HEIGHT = 200

    def __init__(self, specs: list[SeriesSpec], parent: QWidget | None = None, refresh_ms: int = 1000):
        super().__init__(parent)
        self.specs = list(specs)
        self.buffers = {spec.key: SeriesBuffer() for spec in self.specs}
        self._curves: dict = {}
        self._plots: dict = {}
        self._graphics = None
        self.columns = self.COLUMNS
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
            self._follow_palette()

    def record(self, key: str, value: float) -> None:
        buffer = self.buffers.get(key)
        if buffer is not None:
            buffer.add(value)

    def showEvent(self, event):  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._graphics is None:
            self._build()
            self._fit_columns()
        self._timer.start()
        self.refresh()

    def hideEvent(self, event):  # noqa: N802
        self._timer.stop()
        super().hideEvent(event)

    def resizeEvent(self, event):  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self._graphics is not None:
            self._fit_columns()

    def _fit_columns(self) -> None:
        columns = self._fitting_columns()
        if columns != self.columns:
            self._rebuild(columns)

    def _fitting_columns(self) -> int:
        """The most columns whose plots, each at least as wide as its title and axis, fit the width."""
        widths = [plot.effectiveSizeHint(Qt.SizeHint.MinimumSize).width() for plot in self._plots.values()]
        grid = self._graphics.ci.layout
        left, _, right, _ = grid.getContentsMargins()
        for columns in range(self.COLUMNS, 1, -1):
            needed = sum(max(widths[j::columns]) for j in range(columns)) + grid.horizontalSpacing() * (columns - 1)
            if needed + left + right <= self.width():
                return columns
        return 1

    def _rebuild(self, columns: int) -> None:
        """The plots again in ``columns`` columns (their samples are kept in the buffers)."""
        self._layout.removeWidget(self._graphics)
        self._graphics.deleteLater()
        self._graphics = None
        self._plots.clear()
        self._curves.clear()
        self.columns = columns
        self._build()
        self.refresh()

    def changeEvent(self, event):  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._graphics is not None:
            self._follow_palette()

    def _build(self) -> None:
        import pyqtgraph as pg

        pg.setConfigOptions(antialias=True)
        self._graphics = pg.GraphicsLayoutWidget()
        self._loading.hide()
        self._layout.addWidget(self._graphics)
        for i, spec in enumerate(self.specs):
            self._add_plot(spec, i)
        self._follow_palette()

    def _follow_palette(self) -> None:
        """Paint the plots in the palette's colours: Base behind, Text for axes and titles, Highlight
        for the curves."""
        import pyqtgraph as pg

        palette = self.palette()
        text, accent = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Highlight)
        self._graphics.setBackground(palette.color(QPalette.ColorRole.Base))
        for key, plot in self._plots.items():
            for side in ("left", "bottom"):
                plot.getAxis(side).setPen(text)
                plot.getAxis(side).setTextPen(text)
            plot.titleLabel.setText(plot.titleLabel.text, color=text.name())
            curve = self._curves[key]
            curve.setPen(pg.mkPen(accent, width=2))
            if curve.opts.get("symbol") is not None:
                curve.setSymbolBrush(pg.mkBrush(accent))

    def _fit_height(self) -> None:
        rows = -(-len(self.specs) // self.columns)
        self._graphics.setMinimumHeight(rows * self.ROW_HEIGHT)

    def _add_plot(self, spec: SeriesSpec, index: int) -> None:
        self._fit_height()
        plot = self._graphics.addPlot(row=index // self.columns, col=index % self.columns)
        plot.setTitle(spec.title + (f" ({spec.unit})" if spec.unit else ""), size="9pt")
        plot.setXRange(-WINDOW_S, 0, padding=0.01)
        plot.setLimits(xMin=-WINDOW_S, xMax=0)
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.setMouseEnabled(x=False, y=False)
        plot.hideButtons()
        plot.getAxis("bottom").setLabel("seconds ago")
        plot.enableAutoRange(axis="y")
        symbols = dict(symbol="o", symbolSize=6, symbolPen=None) if spec.points else {}
        self._curves[spec.key] = plot.plot([], [], **symbols)
        self._plots[spec.key] = plot

    def refresh(self) -> None:
        if self._graphics is None:
            return
        for key, curve in self._curves.items():
            xs, ys = self.buffers[key].xy()
            curve.setData(xs, ys)
