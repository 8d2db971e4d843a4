"""Monitor panel: each executor's status and counters, capabilities, cache metrics, live plots.

Everything is driven by the host's signals (statusUpdated/metricsUpdated at ≥1 Hz, sample);
the panel never calls into an executor itself. The page scrolls up and down, and only the page: its
tables are as large as their contents, and the boxes stand side by side where the page is wide
enough for them, one above the other where it is not.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from executors.service.models import dtype_text

from ..widgets.kv_table import DataTable, KeyValueTable
from ..widgets.plots import LivePlots, SeriesSpec

TITLES = {"whisper": "Speech (Whisper)", "embedding": "Embeddings (BERT)"}
SHORT = {"whisper": "Whisper", "embedding": "BERT"}

SERIES = [
    SeriesSpec("job_latency_s", "Latency per job", "s", points=True),
    SeriesSpec("rtf", "Real-time factor", "× audio", points=True),
    SeriesSpec("texts_per_s", "Embedding throughput", "texts/s", points=True),
    SeriesSpec("memory_mb", "Process memory", "MiB"),
    SeriesSpec("cache_hit_rate", "Cache hit rate", "0–1"),
    SeriesSpec("dictation_latency_s", "Dictation latency (end of speech → final text)", "s", points=True),
    SeriesSpec("dictation_lag_s", "Dictation lag (committed text behind live audio)", "s", points=True),
    SeriesSpec("api_requests_per_s", "API requests", "req/s"),
    SeriesSpec("api_latency_s", "API latency per request", "s", points=True),
    SeriesSpec("api_queue_depth", "API queue depth (waiting + running)", "requests"),
]

_CAPABILITY_ROWS = [
    ("Max batch size", lambda c: str(c.max_batch_size)),
    ("Max sequence length", lambda c: str(c.max_sequence_length)),
    ("Attention", lambda c: ", ".join(c.attention_mechanisms) or "—"),
    ("Dynamic batching", lambda c: _yes(c.supports_dynamic_batching)),
    ("Continuous batching", lambda c: _yes(c.supports_continuous_batching)),
    ("Speculative decoding", lambda c: _yes(c.supports_speculative_decoding)),
    ("Tensor parallelism", lambda c: _yes(c.supports_tensor_parallelism)),
    ("Pipeline parallelism", lambda c: _yes(c.supports_pipeline_parallelism)),
    ("Data types", lambda c: ", ".join(c.supported_dtypes)),
    ("Devices", lambda c: ", ".join(c.supported_devices)),
    ("Parameter memory", lambda c: format_bytes(c.memory_requirements.parameter_memory)),
]


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def format_bytes(n: float | None) -> str:
    if n is None:
        return "—"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" or abs(n) >= 100 else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def format_count(n: int) -> str:
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.1f} M" if n >= 1e6 else f"{n:,}"


class ExecutorCard(QGroupBox):
    """One executor: a state line (with a busy bar while loading) above its properties."""

    def __init__(self, name: str, parent: QWidget | None = None):
        super().__init__(TITLES.get(name, name), parent)
        self.name = name
        self.state_label = QLabel("waiting to load")
        self.state_label.setObjectName("PanelSubtitle")
        self.state_label.setWordWrap(True)  # a long model name wraps rather than widening the page
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.table = KeyValueTable("Loading the model… its status appears here once it is ready.",
                                   per_row=2, fit_rows=11)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._message = ""
        top = QHBoxLayout()
        top.addWidget(self.state_label, 1)
        top.addWidget(self.busy)
        column = QVBoxLayout(self)
        column.addLayout(top)
        column.addWidget(self.table)
        self.model_state = "idle"

    def set_model_state(self, state: str, message: str) -> None:
        self.model_state, self._message = state, message
        self._show_state(state)
        self.busy.setVisible(state in ("loading", "reloading"))

    def _show_state(self, state: str) -> None:
        shown = {"loading": "loading…", "reloading": "reloading…"}.get(state, state)
        message = self._message
        self.state_label.setText(f"{shown.capitalize()} — {message}" if message else shown.capitalize())
        if state == "error":
            self.table.set_pairs([])
            self.table.set_placeholder(f"The model could not be loaded: {message}")

    def update_status(self, status, metrics: dict | None) -> None:
        if self.model_state == "ready":  # the header says what the State row says (Busy during a job)
            self._show_state(status.state.value.lower())
        pairs = [("State", status.state.value), ("Ready", _yes(status.is_ready))]
        if metrics:
            info, model = metrics["info"], metrics.get("model")
            pairs += [("Model", info.model_id), ("Device", info.device), ("Dtype", dtype_text(info)),
                      ("Parameters", format_count(info.num_parameters))]
            if model is not None:
                pairs += [("Source", model.source), ("Loaded in", f"{model.load_seconds:.1f} s")]
            pairs.append(("Reloads", str(metrics.get("reloads", 0))))
        mem = status.memory_usage
        last = f"{time.time() - status.last_operation:.0f} s ago" if status.last_operation else "never"
        pairs += [
            ("Batch size", str(status.current_batch_size)),
            ("Prefill operations", f"{status.prefill_operations:,}"),
            ("Decode operations", f"{status.decode_operations:,}"),
            ("Avg prefill", f"{status.avg_prefill_time_ms:.1f} ms"),
            ("Avg decode", f"{status.avg_decode_time_ms:.1f} ms"),
            # this model's own memory (the process's is the "Process memory" plot)
            ("Model memory", f"{format_bytes(mem.allocated_bytes)} ({mem.utilization_percent:.1f} % of device)"),
            ("In use", format_bytes(mem.used_bytes)),
            ("Weights", format_bytes(mem.parameter_bytes)),
            ("Caches", format_bytes(mem.cache_bytes)),
            ("KV cache", format_bytes(mem.kv_bytes)),
            ("Peak", format_bytes(mem.peak_bytes)),
            ("Last operation", last),
        ]
        self.table.set_pairs(pairs)
        _fit_columns(self.table)


class MonitorPanel(QWidget):
    def __init__(self, host, parent: QWidget | None = None):
        super().__init__(parent)
        self.host = host
        self._metrics: dict[str, dict] = {}
        self.cards = {name: ExecutorCard(name) for name in TITLES}
        self.capabilities = DataTable(["Capability", *(TITLES[n] for n in TITLES)],
                                      "Capabilities appear once a model is loaded.", fit_rows=len(_CAPABILITY_ROWS))
        self.caches = DataTable(["Model", "Cache", "Hits", "Misses", "Hit rate", "Entries", "Size", "Evicted"],
                                "No cache yet: embed some texts to fill the embedding cache.",
                                fit_rows=len(_CAPABILITY_ROWS))
        for table in (self.capabilities, self.caches):  # columns as wide as their words; the page scrolls
            table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            table.horizontalHeader().setStretchLastSection(True)
            table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.plots = LivePlots(SERIES)

        content = QWidget()
        self._grid = QGridLayout(content)
        self._grid.setContentsMargins(12, 4, 12, 12)
        self._grid.setHorizontalSpacing(12)
        self._grid.setVerticalSpacing(6)
        # the left and the right box of each row, side by side; one column: all of them in this order
        self._pairs = [(self.cards["whisper"], self.cards["embedding"]),
                       (_boxed("Live, last 5 minutes (refreshed every second)", self.plots), None),
                       (_boxed("Capabilities", self.capabilities), _boxed("Cache metrics", self.caches))]
        self.columns = 0
        self._lay_out(2)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll)

        host.modelStateChanged.connect(self._on_model_state)
        host.statusUpdated.connect(self._on_status)
        host.metricsUpdated.connect(self._on_metrics)
        host.sample.connect(self.plots.record)
        for name in TITLES:
            self._on_model_state(name, *host.model_state(name))
        host.poll()  # fill the tables now rather than at the next tick

    # ---- layout: two columns where they fit, else one --------------------------------------
    def _lay_out(self, columns: int) -> None:
        if columns == self.columns:
            return
        self.columns = columns
        grid = self._grid
        for row in range(grid.rowCount()):
            grid.setRowStretch(row, 0)
        for box in (box for pair in self._pairs for box in pair if box is not None):
            grid.removeWidget(box)
        row = 0
        for left, right in self._pairs:
            if columns == 2:
                grid.addWidget(left, row, 0, 1, 1 if right is not None else 2)
                if right is not None:
                    grid.addWidget(right, row, 1)
                row += 1
            else:
                for box in (left, right):
                    if box is not None:
                        grid.addWidget(box, row, 0, 1, 2)
                        row += 1
        grid.setRowStretch(row, 1)

    def _two_columns_width(self) -> int:
        """The page width two columns need: the widest row of boxes side by side."""
        margins = self._grid.contentsMargins()
        rows = [left.minimumSizeHint().width() + self._grid.horizontalSpacing() + right.minimumSizeHint().width()
                for left, right in self._pairs if right is not None]
        return max(rows) + margins.left() + margins.right()

    def _fit_page(self) -> None:
        room = self.width() - self.scroll.verticalScrollBar().sizeHint().width()
        self._lay_out(2 if room >= self._two_columns_width() else 1)

    def resizeEvent(self, event):  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit_page()

    # read-back helpers (tests, screenshots)
    def state_text(self, name: str) -> str | None:
        return self.cards[name].table.value("State")

    def value(self, name: str, key: str) -> str | None:
        return self.cards[name].table.value(key)

    def _on_model_state(self, name: str, state: str, message: str) -> None:
        if name in self.cards:
            self.cards[name].set_model_state(state, message)

    def _on_metrics(self, name: str, metrics: dict) -> None:
        self._metrics[name] = metrics
        self._refresh_capabilities()
        self._refresh_caches()

    def _on_status(self, name: str, status) -> None:
        if name in self.cards:
            self.cards[name].update_status(status, self._metrics.get(name))

    def _refresh_capabilities(self) -> None:
        caps = {n: m["capabilities"] for n, m in self._metrics.items() if m.get("capabilities")}
        if not caps:
            return
        self.capabilities.set_rows([[label, *(fmt(caps[n]) if n in caps else "—" for n in TITLES)]
                                    for label, fmt in _CAPABILITY_ROWS])
        _fit_columns(self.capabilities)

    def _refresh_caches(self) -> None:
        rows = []
        for name, metrics in self._metrics.items():
            snapshot = metrics.get("cache")
            for cache_name, c in (snapshot.caches.items() if snapshot else ()):
                rows.append([SHORT[name], cache_name, f"{c.hits:,}", f"{c.misses:,}", f"{c.hit_rate:.0%}",
                             f"{c.entries:,}", format_bytes(c.bytes), f"{c.evictions:,}"])
        self.caches.set_rows(rows)
        _fit_columns(self.caches)
        self._fit_page()  # wider tables may no longer fit side by side


def _fit_columns(table) -> None:
    """Never narrower than its columns' words ("Misses", not "Misse"): the page lays out around it."""
    header = table.horizontalHeader()
    needed = sum(max(header.sectionSizeHint(c), table.sizeHintForColumn(c)) for c in range(table.columnCount()))
    table.setMinimumWidth(needed + 2 * table.frameWidth() + 2)


def _boxed(title: str, widget: QWidget) -> QGroupBox:
    box = QGroupBox(title)
    QVBoxLayout(box).addWidget(widget)
    return box
