"""The API server hosted by the app: same loop, same host workers; settings page and monitor series."""

from __future__ import annotations

import numpy as np

from ferrum_gui.api.server import ApiSettings, api_controller
from ferrum_gui.api.settings_page import ApiServerPage


def test_api_server_runs_on_the_app_loop_through_the_host(main_window, host, run_async, wait_until, listen):
    import aiohttp
    from PySide6.QtWidgets import QApplication

    monitor = main_window.show_panel("monitor")
    dialog = main_window.show_preferences()
    page = dialog.page(ApiServerPage)
    controller = api_controller(host)
    samples = []
    listen(host.sample, lambda series, value: samples.append(series))
    assert page.token.text() == controller.token and len(page.token.text()) > 20
    page.copy_token()
    assert QApplication.clipboard().text() == controller.token

    async def embed(url: str, token: str):
        body = {"model": host.embedding.model_id, "input": ["hosted in the app"]}
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session, \
                session.post(url + "/embeddings", json=body) as r:
            return r.status, await r.json()

    try:
        run_async(controller.apply(ApiSettings(enabled=True, port=0)))  # port 0: any free port
        assert controller.state == "running" and page.status.text() == f"Running at {controller.url}"
        status, body = run_async(embed(controller.url, controller.token))
        assert status == 200
        direct = run_async(host.embed(["hosted in the app"]))
        np.testing.assert_allclose(np.array(body["data"][0]["embedding"], dtype=np.float32), direct[0], atol=1e-6)
        wait_until(lambda: {"api_latency_s", "api_requests_per_s", "api_queue_depth"} <= set(samples), timeout=30)
        assert len(monitor.plots.buffers["api_latency_s"].xy()[0]) >= 1
    finally:
        run_async(controller.apply(ApiSettings(enabled=False)))
        dialog.close()
    assert controller.state == "stopped" and controller.url is None
