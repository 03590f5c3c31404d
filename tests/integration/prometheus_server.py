"""A real Prometheus server (Debian's `prometheus` binary) for integration tests.

Each PrometheusServer runs its own process on a free loopback port with its own data folder
and a scrape config of its own (scrape_interval 1s), with the remote-write receiver on; it
never touches the packaged service, which may listen on :9090.

The whole API:

    server = PrometheusServer()
    server.start(["127.0.0.1:9464", ...])   # scrape targets (HOST:PORT, path /metrics); may be []
    server.url                              # "http://127.0.0.1:PORT"; remote write: url + "/api/v1/write"
    server.query("sum(punctual_requests_total)")  # /api/v1/query: the result list of a vector
    server.stop()                           # also removes the data folder

or `with prometheus_server(targets) as server:`. start() returns once Prometheus answers
/-/ready; query() raises on an error status.
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

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"

CONFIG = """global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: punctual
    static_configs:
      - targets: [{targets}]
"""


class PrometheusServer:
    def __init__(self):
        self.url = None
        self._proc = None
        self._dir = None

    def start(self, targets, timeout_s=20.0):
        self._dir = tempfile.mkdtemp(prefix="punctual-prometheus-")
        config = os.path.join(self._dir, "prometheus.yml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(CONFIG.format(targets=", ".join(f'"{t}"' for t in targets)))
        for _ in range(5):  # the free port may be taken between probe and bind
            port = harness.free_port()
            self._proc = subprocess.Popen(
                [PROMETHEUS, f"--config.file={config}",
                 f"--storage.tsdb.path={os.path.join(self._dir, 'data')}",
                 f"--web.listen-address=127.0.0.1:{port}",
                 "--web.enable-remote-write-receiver", "--log.level=warn"],
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(self._dir, "log"), "wb"))
            self.url = f"http://127.0.0.1:{port}"
            if self._wait_ready(timeout_s):
                return self
            self._kill()
        raise RuntimeError(f"prometheus did not start; its log: {self.log()[-800:]!r}")

    def _wait_ready(self, timeout_s):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=1) as r:
                    if r.status == 200:
                        return True
            except OSError:
                pass
            time.sleep(0.1)
        return False

    def query(self, expr):
        """The result list of an instant query (each {"metric": {...}, "value": [t, "v"]})."""
        q = urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{q}", timeout=10) as r:
            body = json.load(r)
        if body.get("status") != "success":
            raise RuntimeError(f"query {expr!r} failed: {body}")
        return body["data"]["result"]

    def log(self):
        try:
            with open(os.path.join(self._dir, "log"), encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _kill(self):
        if self._proc is not None:
            harness.stop_process(self._proc)
            self._proc = None

    def stop(self):
        self._kill()
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


@contextlib.contextmanager
def prometheus_server(targets):
    server = PrometheusServer()
    try:
        yield server.start(targets)
    finally:
        server.stop()
