"""Debian's prometheus server for the tests: on a free loopback port, with a data folder of its
own and the remote-write receiver on, never the packaged service (which may hold :9090).

    with prometheus_server.started(targets=["127.0.0.1:9100"]) as prom:
        prom.query('sum(punctual_requests_total)')
"""

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import harness

PROMETHEUS = "/usr/bin/prometheus"


class Prometheus:
    def __init__(self, proc, port, folder):
        self.proc = proc
        self.port = port
        self.folder = folder
        self.url = f"http://127.0.0.1:{port}"

    @property
    def remote_write_url(self):
        return f"{self.url}/api/v1/write"

    def query(self, expr):
        """The instant vector of `expr` now: [(labels, float value)]."""
        q = urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{q}", timeout=10) as r:
            body = json.load(r)
        harness.check(body.get("status") == "success", f"query {expr!r}: {body}")
        return [(item["metric"], float(item["value"][1])) for item in body["data"]["result"]]

    def stop(self):
        harness.stop_process(self.proc)
        shutil.rmtree(self.folder, ignore_errors=True)


def start(targets=(), scrape_interval="1s"):
    """Starts prometheus scraping `targets` (HOST:PORT, /metrics) and waits until it is ready."""
    harness.check(os.path.exists(PROMETHEUS), f"{PROMETHEUS} is missing (apt-get install prometheus)")
    folder = tempfile.mkdtemp(prefix="punctual-prometheus-")
    config = os.path.join(folder, "prometheus.yml")
    with open(config, "w", encoding="utf-8") as f:
        f.write(f"global:\n  scrape_interval: {scrape_interval}\n  evaluation_interval: 10s\n")
        if targets:
            listed = ", ".join(f'"{t}"' for t in targets)
            f.write(f"scrape_configs:\n  - job_name: punctual\n    static_configs:\n"
                    f"      - targets: [{listed}]\n")
    port = harness.free_port()
    log = open(os.path.join(folder, "prometheus.log"), "w", encoding="utf-8")
    proc = subprocess.Popen([PROMETHEUS, f"--config.file={config}",
                             f"--storage.tsdb.path={os.path.join(folder, 'data')}",
                             f"--web.listen-address=127.0.0.1:{port}",
                             "--web.enable-remote-write-receiver"],
                            stdout=log, stderr=subprocess.STDOUT)
    log.close()
    server = Prometheus(proc, port, folder)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{server.url}/-/ready", timeout=1) as r:
                if r.status == 200:
                    return server
        except OSError:
            time.sleep(0.1)
    with open(os.path.join(folder, "prometheus.log"), encoding="utf-8") as f:
        tail = f.read()[-1500:]
    server.stop()
    raise AssertionError(f"prometheus did not become ready: {tail}")


@contextlib.contextmanager
def started(targets=(), scrape_interval="1s"):
    server = start(targets, scrape_interval)
    try:
        yield server
    finally:
        server.stop()
