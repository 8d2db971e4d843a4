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
