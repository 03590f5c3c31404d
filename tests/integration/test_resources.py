"""Resource limits and the second interrupt.

- Out of ephemeral ports mid-run: inside a private network namespace (unshare -n, as root) the
  local port range is cut to two ports, so connections beyond two fail with EADDRNOTAVAIL. Those
  requests must be counted as socket_error `no_ports`, the run must go on, and the denominator
  must hold.
- Out of file descriptors mid-run (the limit lowered under the running process): `no_fds`.
- A -c beyond the open-file limit is refused before anything is sent (exit 2, one line).
- A second SIGINT exits at once (130) and leaves no partial output file.
- A --max-queue far beyond the machine's memory is a ceiling, not a reservation: the run goes
  on, and its peak RSS stays small.

Usage: test_resources.py PATH_TO_PUNCTUAL
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

NETNS_SCRIPT = r"""
set -e
ip link set lo up
sysctl -q -w net.ipv4.ip_local_port_range="40000 40001"
"$1" serve --port 18090 --duration 8s --service-time 20ms >/dev/null &
server=$!
for i in $(seq 50); do
  (exec 3<>/dev/tcp/127.0.0.1/18090) 2>/dev/null && break
  sleep 0.05
done
set +e
"$1" run -t1 -c4 -R200 -d2s --timeout 1s --json "$2" http://127.0.0.1:18090/ >/dev/null 2>&1
echo "rc=$?"
kill $server 2>/dev/null
wait $server 2>/dev/null
exit 0
"""


def out_of_ports(binary):
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        raise AssertionError("needs root, unshare and ip (util-linux, iproute2)")
    work = tempfile.mkdtemp(prefix="punctual-ports-")
    try:
        report_path = os.path.join(work, "r.json")
        script = os.path.join(work, "ns.sh")
        with open(script, "w") as f:
            f.write(NETNS_SCRIPT)
        started = time.monotonic()
        proc = subprocess.run(["unshare", "-n", "bash", script, binary, report_path],
                              capture_output=True, text=True, timeout=30)
        wall = time.monotonic() - started
        harness.check("rc=" in proc.stdout, f"the run did not happen: {proc.stdout} {proc.stderr}")
        report = harness.load_report(report_path)
        harness.assert_denominator(report)
        no_ports = report["socket_errors"]["no_ports"]
        harness.check(no_ports > 0, f"no request counted as no_ports: {report['socket_errors']}")
        harness.check(report["socket_errors"]["connect"] == 0,
                      "port exhaustion must not be blamed on the server (connect)")
        harness.check(report["outcomes"]["ok"] > 0, "the run did not go on after running out of ports")
        harness.check(wall < 2 + 1 + 1 + 3, f"took {wall:.1f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def out_of_descriptors(binary):
    """The open-file limit is lowered under a running punctual (prlimit --pid): every new
    connection then fails with EMFILE, which must count as socket_error `no_fds`, while the run
    goes on and still writes its report once its sockets are closed."""
    if shutil.which("prlimit") is None:
        raise AssertionError("needs prlimit (util-linux)")
    work = tempfile.mkdtemp(prefix="punctual-fds-")
    try:
        with harness.punctual_serve(binary, "--duration", "20s") as srv:
            out = os.path.join(work, "r.json")
            proc = subprocess.Popen([binary, "run", "-t1", "-c4", "-R100", "-d3s", "--timeout", "1s",
                                     "--no-keepalive", "--json", out, srv.url()],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(1.0)
            # 0-2 stdio, 3 epoll, 4 the worker's eventfd: a limit of 5 leaves no room for a socket.
            subprocess.run(["prlimit", f"--pid={proc.pid}", "--nofile=5:5"], check=True, timeout=5)
            rc = proc.wait(timeout=15)
        harness.check(rc in (0, 4), f"exit {rc}: {proc.stderr.read()[-300:]}")
        report = harness.load_report(out)
        harness.assert_denominator(report)
        errors = report["socket_errors"]
        harness.check(errors["no_fds"] > 0, f"no request counted as no_fds: {errors}")
        harness.check(errors["connect"] == 0, f"descriptor exhaustion blamed on the server: {errors}")
        harness.check(report["outcomes"]["ok"] > 50, f"too few ok before the limit: {report['outcomes']}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def too_many_connections(binary):
    proc = subprocess.run(["prlimit", "--nofile=100", binary, "run", "-t1", "-c", "500", "-R", "10",
                           f"http://127.0.0.1:{harness.closed_port()}/"],
                          capture_output=True, text=True, timeout=10)
    harness.check_eq(proc.returncode, 2, "exit code")
    lines = harness.stderr_lines(proc.stderr)
    harness.check(len(lines) == 1 and "500" in lines[0], f"stderr: {proc.stderr!r}")


# A healthy short run's peak RSS is a few tens of MB; a queue's ring taken up front for
# --max-queue 1e9 would be ~100 GB (or a bad_alloc, exit 1).
MAX_QUEUE_RSS_LIMIT_KB = 256 * 1024


def wait_with_rusage(proc, timeout_s):
    """Reaps PROC with wait4, for its own rusage; kills it past TIMEOUT_S."""
    deadline = time.monotonic() + timeout_s
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage
        if time.monotonic() > deadline:
            proc.kill()
        time.sleep(0.02)


def huge_max_queue(binary):
    work = tempfile.mkdtemp(prefix="punctual-max-queue-")
    try:
        with harness.punctual_serve(binary, "--service-time", "1ms", "--duration", "30s") as srv:
            out = os.path.join(work, "r.json")
            cmd = [binary, "run", "-t1", "-c2", "-R200", "-d500ms", "--max-queue", "1000000000",
                   "--json", out, srv.url()]
            started = time.monotonic()
            with open(os.path.join(work, "stdout"), "w+") as stdout, \
                    open(os.path.join(work, "stderr"), "w+") as stderr:
                proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, text=True)
                usage = wait_with_rusage(proc, 20)
                stdout.seek(0)
                stderr.seek(0)
                result = harness.Result(cmd, proc.returncode, stdout.read(), stderr.read(),
                                        time.monotonic() - started, None)
        if os.path.exists(out):
            result.report = harness.load_report(out)
        harness.check("bad_alloc" not in result.stderr, f"bad_alloc: {result.describe()}")
        report = harness.require_report(result)
        harness.check_eq(report["outcomes"].get("dropped", 0), 0, "dropped")
        harness.check(usage.ru_maxrss < MAX_QUEUE_RSS_LIMIT_KB,
                      f"peak RSS {usage.ru_maxrss} KB, over {MAX_QUEUE_RSS_LIMIT_KB} KB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def second_interrupt(binary):
    work = tempfile.mkdtemp(prefix="punctual-sigint-")
    try:
        # A server that never answers: the first SIGINT starts a drain of up to 1 s, and the
        # second one, sent inside it, must end the process at once.
        with harness.punctual_serve(binary, "--stall-at", "0s:60s", "--duration", "30s") as srv:
            out = os.path.join(work, "r.json")
            proc = subprocess.Popen([binary, "run", "-t1", "-c4", "-R200", "-d10s", "--json", out,
                                     "--hlog", os.path.join(work, "r.hlog"), srv.url()],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(1.0)
            proc.send_signal(signal.SIGINT)
            time.sleep(0.1)
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            rc = proc.wait(timeout=10)
            elapsed = time.monotonic() - sent
        harness.check_eq(rc, 130, "exit code")
        harness.check(elapsed < 0.5, f"the second SIGINT took {elapsed:.2f} s to end the run")
        leftovers = [n for n in os.listdir(work) if ".tmp" in n]
        harness.check(not leftovers, f"partial files left behind: {leftovers}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("resources")
    checks.run("out of ephemeral ports mid-run is counted as no_ports", out_of_ports, binary)
    checks.run("out of descriptors mid-run is counted as no_fds", out_of_descriptors, binary)
    checks.run("-c beyond the open-file limit is refused up front", too_many_connections, binary)
    checks.run("a second SIGINT exits at once without partial files", second_interrupt, binary)
    checks.run("--max-queue 1000000000 takes memory only for what waits", huge_max_queue, binary)
    checks.finish()


if __name__ == "__main__":
    main()
