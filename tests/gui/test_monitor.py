"""Monitor panel on the real host: Busy while a transcription runs, counters and plots after it."""

from __future__ import annotations

CLIP = "pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0880.flac"


def _count(text: str | None) -> int:
    return int((text or "0").replace(",", ""))


def test_monitor_shows_busy_during_a_job_and_counters_after(main_window, host, run_async, listen, speech_dir):
    monitor = main_window.show_panel("monitor")
    assert monitor.state_text("whisper") in ("Ready", "Busy")
    decodes_before = _count(monitor.value("whisper", "Decode operations"))
    latencies_before = len(monitor.plots.buffers["job_latency_s"])
    seen = []
    # connected after the panel, so this runs after the panel has updated its table
    listen(host.statusUpdated, lambda name, _status: name == "whisper" and seen.append(monitor.state_text(name)))

    transcript = run_async(host.transcribe(speech_dir / CLIP), timeout=300)
    run_async(_next_poll(host), timeout=10)

    assert transcript.segments
    assert "Busy" in seen
    assert monitor.state_text("whisper") == "Ready"
    assert _count(monitor.value("whisper", "Decode operations")) > decodes_before
    assert float(monitor.value("whisper", "Avg decode").split()[0]) > 0
    assert monitor.value("whisper", "Model") == "whisper-tiny.en"
    assert monitor.value("whisper", "Parameters").endswith("M")
    assert len(monitor.plots.buffers["job_latency_s"]) == latencies_before + 1
    assert len(monitor.plots.buffers["rtf"]) > 0 and len(monitor.plots.buffers["memory_mb"]) > 0


def test_capabilities_cache_table_and_plots(main_window, host, run_async):
    monitor = main_window.show_panel("monitor")
    run_async(host.embed(["the shuttle reached orbit", "the shuttle reached orbit", "a different text"]))
    run_async(host.embed(["the shuttle reached orbit"]))  # a cache hit
    run_async(_next_poll(host), timeout=10)

    caps = {row[0]: row[1:] for row in monitor.capabilities.row_texts()}
    assert caps["Max sequence length"][1] == "256"
    assert "cpu" in caps["Devices"][0]
    embedding_rows = [row for row in monitor.caches.row_texts() if row[0] == "BERT"]
    assert len(embedding_rows) == 1
    assert _count(embedding_rows[0][2]) >= 1  # hits
    assert len(monitor.plots.buffers["texts_per_s"]) >= 2

    monitor.plots.refresh()
    assert monitor.plots._graphics is not None  # built when first shown
    xs, ys = monitor.plots._curves["memory_mb"].getData()
    assert len(xs) > 0 and max(ys) > 10 and max(xs) <= 0


def test_memory_cards_show_each_models_own_memory(main_window, host, run_async):
    """Each card shows its model's weights, caches and KV, not the process's memory twice."""
    from ferrum_gui.panels.monitor_panel import format_bytes

    monitor = main_window.show_panel("monitor")
    run_async(host.ready("whisper"), timeout=300)
    run_async(host.ready("embedding"), timeout=300)
    run_async(_next_poll(host), timeout=10)
    shown = {}
    for name in ("whisper", "embedding"):
        mem = host.model(name).executor.status().memory_usage
        assert monitor.value(name, "Weights") == format_bytes(mem.parameter_bytes)
        assert monitor.value(name, "KV cache") == format_bytes(mem.kv_bytes)
        assert monitor.value(name, "Model memory").endswith("% of device)")
        shown[name] = (monitor.value(name, "Weights"), monitor.value(name, "Model memory"))
    assert shown["whisper"][0] != shown["embedding"][0] and shown["whisper"][1] != shown["embedding"][1]
    process_mib = monitor.plots.buffers["memory_mb"].xy()[1][-1]
    both = sum(host.model(n).executor.status().memory_usage.allocated_bytes for n in ("whisper", "embedding"))
    assert process_mib * 2**20 > both  # the plot is the whole process, more than the two models


async def _next_poll(host):
    import asyncio

    done = asyncio.Event()

    def on_status(*_):
        done.set()
    host.statusUpdated.connect(on_status)
    try:
        await done.wait()
    finally:
        host.statusUpdated.disconnect(on_status)


def test_header_dtype_and_columns_tell_the_truth(main_window, host, run_async, listen, speech_dir):
    """The card's header agrees with its State row (Busy during a job); a quantised model's dtype says
    int8; no table column is narrower than its words, even in the smallest window."""
    main_window.resize(main_window.minimumSize())
    monitor = main_window.show_panel("monitor")
    card = monitor.cards["whisper"]
    seen: list[tuple[str, str]] = []
    listen(host.statusUpdated, lambda name, _s: name == "whisper" and seen.append(
        (card.state_label.text(), monitor.state_text("whisper"))))
    run_async(host.embed(["the shuttle reached orbit", "the shuttle reached orbit"]))  # fill the cache table
    run_async(host.transcribe(speech_dir / CLIP), timeout=300)
    run_async(_next_poll(host), timeout=10)

    busy = [header for header, state in seen if state == "Busy"]
    assert busy and all(header.startswith("Busy") for header in busy), seen
    assert all(header.startswith(state) for header, state in seen), seen
    assert card.state_label.text().startswith("Ready")

    assert getattr(host.whisper, "quantized", None) == "int8"  # what the app loads on a CPU
    assert monitor.value("whisper", "Dtype") == "int8 (float32 activations)"
    assert "on cpu, int8 (float32 activations), loaded" in host.model_state("whisper")[1]  # the header's words too

    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()  # let the layout give the tables the width they asked for
    for table in (monitor.capabilities, monitor.caches):
        assert table.rowCount() > 0
        metrics = table.fontMetrics()
        header = table.horizontalHeader()
        for column in range(table.columnCount()):
            label = table.horizontalHeaderItem(column).text()
            assert header.sectionSize(column) >= metrics.horizontalAdvance(label) + 8, label
            for row in range(table.rowCount()):
                text = table.cell_text(row, column)
                assert metrics.horizontalAdvance(text) <= table.columnWidth(column) - 6, (label, text)
        wanted = sum(max(header.sectionSizeHint(c), table.sizeHintForColumn(c)) for c in range(table.columnCount()))
        assert table.viewport().width() >= wanted  # room for every column at its full width
