"""TLS helpers for the integration tests: certificate material made with the openssl CLI at test
time, an nginx that serves it, and the exact bytes of an exchange over TLS.

    with tls_lib.tls_material() as m:
        with tls_lib.nginx_tls_server(m, extra=("expired", "mtls")) as nginx:
            nginx.url("/")                  # https://localhost:PORT/, certificate signed by m.ca_cert
            nginx.url("/", "expired")       # the same locations, with an expired certificate

The material lives in a temporary directory made for the run and removed after it; every server
listens on 127.0.0.1 only and is stopped by the context manager that started it.
"""

import contextlib
import hashlib
import os
import re
import shutil
import socket
import socketserver
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check  # noqa: E402

OPENSSL = "/usr/bin/openssl"
# Names under the reserved .test and .example domains resolve nowhere, so a run that reaches
# them can only have used --resolve.
SERVICE_HOST = "service.test"
WRONG_HOST = "wrong.example"
# The material is made anew for every run of the tests, so it need not outlive one.
VALID_DAYS = 2
# OpenSSL 3.0's `openssl req -x509` and `openssl x509 -req` can only start a certificate now, so
# the expired one goes through `openssl ca`, whose -startdate and -enddate take any dates.
EXPIRED_START = "20200101000000Z"
EXPIRED_END = "20200102000000Z"

# One config for every openssl command: the system's openssl.cnf would add its own defaults
# (its v3_ca section makes any `req -x509` certificate a CA).
OPENSSL_CNF = """\
[ req ]
distinguished_name = req_dn
prompt = no
[ req_dn ]
CN = unused

[ ca ]
default_ca = test_ca
[ test_ca ]
database = {dir}/db/index.txt
new_certs_dir = {dir}/db
rand_serial = yes
default_md = sha256
policy = any_name
unique_subject = no
copy_extensions = none
[ any_name ]
commonName = supplied

[ ca_ext ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[ server_localhost ]
{leaf}extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
[ server_wrong_host ]
{leaf}extendedKeyUsage = serverAuth
subjectAltName = DNS:{wrong_host}
[ server_service ]
{leaf}extendedKeyUsage = serverAuth
subjectAltName = DNS:{service_host}
[ client ]
{leaf}extendedKeyUsage = clientAuth
"""
LEAF_EXTENSIONS = """\
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""


def _config_text(directory):
    return OPENSSL_CNF.format(dir=directory, leaf=LEAF_EXTENSIONS, wrong_host=WRONG_HOST,
                              service_host=SERVICE_HOST)


def openssl(*args):
    """Runs the openssl CLI; returns its stdout, raises with its stderr when it fails."""
    proc = subprocess.run([OPENSSL, *args], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


class Material:
    """Paths of the certificate material in one temporary directory.

    ca_cert/ca_key          the test CA (nothing trusts it unless told: --cacert)
    server_cert/key         localhost and 127.0.0.1, signed by the CA
    expired_cert/key        the same names, signed by the CA, valid only in EXPIRED_START..END
    wrong_host_cert/key     WRONG_HOST only, signed by the CA
    service_cert/key        SERVICE_HOST only, signed by the CA
    client_ca_cert/key      a second CA, for client certificates only
    client_cert/key         a client certificate signed by the client CA
    other_key               a key that belongs to no certificate here
    garbage                 a file that is no PEM at all
    """

    def __init__(self, directory):
        self.dir = directory
        self.config = os.path.join(directory, "openssl.cnf")

    def path(self, name):
        return os.path.join(self.dir, name)

    def pair(self, name):
        """(certificate, key) of a named server certificate: server, expired, wrong_host, service."""
        return getattr(self, f"{name}_cert"), getattr(self, f"{name}_key")


def _new_key(m, name):
    path = m.path(f"{name}.key")
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path)
    return path


def _make_ca(m, name, subject):
    key = _new_key(m, name)
    cert = m.path(f"{name}.pem")
    openssl("req", "-config", m.config, "-x509", "-new", "-key", key, "-out", cert,
            "-days", str(VALID_DAYS), "-subj", subject, "-extensions", "ca_ext")
    return cert, key


def _sign(m, name, subject, ca, extensions, dates=None):
    """A new key and a certificate for it, issued by CA=(cert, key) through `openssl ca`."""
    key = _new_key(m, name)
    csr = m.path(f"{name}.csr")
    cert = m.path(f"{name}.pem")
    openssl("req", "-config", m.config, "-new", "-key", key, "-out", csr, "-subj", subject)
    validity = ["-startdate", dates[0], "-enddate", dates[1]] if dates else ["-days", str(VALID_DAYS)]
    openssl("ca", "-config", m.config, "-batch", "-notext", "-cert", ca[0], "-keyfile", ca[1],
            "-in", csr, "-out", cert, "-extensions", extensions, *validity)
    return cert, key


VERIFY_ERROR = re.compile(r"^error \d+ at \d+ depth lookup: (.+)$", re.M)


def verify_reason(cert, cafile=None, hostname=None, ip=None, purpose="sslserver", untrusted_store=False):
    """OpenSSL's reason for rejecting CERT (the text punctual must quote), or None when it
    verifies.

    Without CAFILE the system's default trust store is used, as punctual does by default;
    UNTRUSTED_STORE replaces it with nothing at all."""
    args = [OPENSSL, "verify", "-purpose", purpose]
    if cafile:
        args += ["-CAfile", cafile]
    if untrusted_store:
        args += ["-no-CAfile", "-no-CApath", "-no-CAstore"]
    if hostname:
        args += ["-verify_hostname", hostname]
    if ip:
        args += ["-verify_ip", ip]
    proc = subprocess.run([*args, cert], capture_output=True, text=True, timeout=30)
    if proc.returncode == 0:
        return None
    m = VERIFY_ERROR.search(proc.stdout + proc.stderr)
    if not m:
        raise RuntimeError(f"openssl verify failed without a reason: {proc.stdout!r} {proc.stderr!r}")
    return m.group(1).strip()


def public_key(path, is_cert):
    if is_cert:
        return openssl("x509", "-in", path, "-noout", "-pubkey")
    return openssl("pkey", "-in", path, "-pubout")


def make_material(directory):
    """Creates every file Material lists in DIRECTORY and checks each is what it claims to be."""
    m = Material(directory)
    os.makedirs(m.path("db"), exist_ok=True)
    open(m.path("db/index.txt"), "w").close()
    with open(m.config, "w", encoding="utf-8") as f:
        f.write(_config_text(directory))

    ca = _make_ca(m, "ca", "/CN=punctual test CA")
    m.ca_cert, m.ca_key = ca
    m.server_cert, m.server_key = _sign(m, "server", "/CN=localhost", ca, "server_localhost")
    m.expired_cert, m.expired_key = _sign(m, "expired", "/CN=localhost", ca, "server_localhost",
                                          dates=(EXPIRED_START, EXPIRED_END))
    m.wrong_host_cert, m.wrong_host_key = _sign(m, "wrong_host", f"/CN={WRONG_HOST}", ca,
                                                "server_wrong_host")
    m.service_cert, m.service_key = _sign(m, "service", f"/CN={SERVICE_HOST}", ca, "server_service")
    client_ca = _make_ca(m, "client_ca", "/CN=punctual test client CA")
    m.client_ca_cert, m.client_ca_key = client_ca
    m.client_cert, m.client_key = _sign(m, "client", "/CN=punctual test client", client_ca, "client")
    m.other_key = _new_key(m, "other")
    m.garbage = m.path("garbage.pem")
    with open(m.garbage, "wb") as f:
        f.write(b"this is not a certificate\n" + bytes(range(256)) * 4)
    _self_check(m)
    return m


def _self_check(m):
    """The material must fail and pass exactly where the tests rely on it, or every TLS test
    would prove nothing."""
    reason = verify_reason(m.server_cert, m.ca_cert, hostname="localhost")
    check(reason is None, f"server certificate does not verify for localhost: {reason}")
    reason = verify_reason(m.server_cert, m.ca_cert, ip="127.0.0.1")
    check(reason is None, f"server certificate does not verify for 127.0.0.1: {reason}")
    reason = verify_reason(m.server_cert, untrusted_store=True)
    check(reason is not None, "server certificate verifies without its CA")
    reason = verify_reason(m.server_cert)
    check(reason is not None, "server certificate verifies against the system trust store")
    reason = verify_reason(m.expired_cert, m.ca_cert, hostname="localhost")
    check(reason is not None and "expired" in reason, f"expired certificate: openssl says {reason!r}")
    reason = verify_reason(m.wrong_host_cert, m.ca_cert)
    check(reason is None, f"wrong-host certificate does not verify for its own name: {reason}")
    reason = verify_reason(m.wrong_host_cert, m.ca_cert, hostname="localhost")
    check(reason is not None and "hostname mismatch" in reason,
          f"wrong-host certificate for localhost: openssl says {reason!r}")
    reason = verify_reason(m.service_cert, m.ca_cert, hostname=SERVICE_HOST)
    check(reason is None, f"{SERVICE_HOST} certificate does not verify: {reason}")
    reason = verify_reason(m.client_cert, m.client_ca_cert, purpose="sslclient")
    check(reason is None, f"client certificate does not verify against the client CA: {reason}")
    reason = verify_reason(m.client_cert, m.ca_cert, purpose="sslclient")
    check(reason is not None, "client certificate verifies against the server CA")
    check(public_key(m.client_cert, True) == public_key(m.client_key, False),
          "client key does not match the client certificate")
    check(public_key(m.client_cert, True) != public_key(m.other_key, False),
          "the other key matches the client certificate")


@contextlib.contextmanager
def tls_material():
    """Makes the material in a fresh temporary directory; yields a Material; removes it all."""
    directory = tempfile.mkdtemp(prefix="punctual-tls-")
    try:
        yield make_material(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# ---------------------------------------------------------------------------
# nginx over TLS

# harness.NGINX_LOCATIONS, so each plain-HTTP check has its TLS twin.
LOCATIONS = harness.NGINX_LOCATIONS

# Fields of the access log, in order, separated by '|'. They are what nginx saw of each request,
# to be set against punctual's own account of the same run.
LOG_FIELDS = ("server_port", "protocol", "cipher", "reused", "sni", "host", "client_verify",
              "client_dn", "uri", "status", "bytes_sent")

NGINX_TLS_CONF = harness.NGINX_PREAMBLE + """\
http {{
    log_format tls '$server_port|$ssl_protocol|$ssl_cipher|$ssl_session_reused|$ssl_server_name|'
                   '$http_host|$ssl_client_verify|$ssl_client_s_dn|$request_uri|$status|$bytes_sent';
    access_log {tmp}/access.log tls;
{http_settings}
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:SSL:1m;
    ssl_session_timeout 10m;
    ssl_session_tickets on;
{servers}
    # Plain HTTP, so that probing nginx's counters needs no TLS and changes no TLS figure.
    server {{
        listen 127.0.0.1:{status_port};
        access_log off;
        location = /nginx_status {{
            stub_status;
        }}
    }}
}}
"""

SERVER_BLOCK = """\
    server {{
        listen 127.0.0.1:{port} ssl{http2};
        ssl_certificate {cert};
        ssl_certificate_key {key};
{client_auth}{locations}    }}
"""

# /big's size: more than HTTP/2's initial flow-control window (65,535 bytes), so a client must
# send WINDOW_UPDATE frames to receive it.
BIG_BODY_SIZE = 200_000

# Server blocks nginx_tls_server can add beside the main one: name -> the Material pair served.
EXTRA_SERVERS = {
    "expired": "expired",
    "wrong_host": "wrong_host",
    "service": "service",
    # the localhost certificate, on a server that demands a client certificate (ssl_verify_client
    # is a server-level directive, so mutual TLS gets its own port)
    "mtls": "server",
}


class NginxTLS:
    def __init__(self, tmp, ports, status_port, proc):
        self.tmp = tmp
        self.ports = ports  # name -> port; "server" is the main one
        self.port = ports["server"]
        self.status_port = status_port
        self.proc = proc

    def url(self, path="/", name="server", host="localhost"):
        return f"https://{host}:{self.ports[name]}{path}"

    def accepts(self):
        """nginx's count of accepted connections so far, over every port (stub_status)."""
        _, body = harness.raw_get(self.status_port, "/nginx_status")
        m = re.search(rb"\n\s*(\d+)\s+(\d+)\s+(\d+)", body)
        if not m:
            raise AssertionError(f"cannot parse stub_status: {body!r}")
        return int(m.group(1))

    def access_log(self, name=None):
        """The requests nginx logged so far (on the NAME server only, if given), as dicts keyed
        by LOG_FIELDS; empty values are nginx's '-'."""
        try:
            with open(os.path.join(self.tmp, "access.log"), encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return []
        entries = [dict(zip(LOG_FIELDS, line.split("|"))) for line in lines if line]
        if name is not None:
            entries = [e for e in entries if e["server_port"] == str(self.ports[name])]
        return entries

    def log_mark(self):
        """How many requests the log holds now: access_log()[mark:] are those logged since."""
        return len(self.access_log())

    def error_log(self):
        try:
            with open(os.path.join(self.tmp, "error.log"), encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""


def _config(m, tmp, ports, status_port, http2=False):
    blocks = []
    for name, port in ports.items():
        cert, key = m.pair(EXTRA_SERVERS.get(name, name))
        client_auth = ""
        if name == "mtls":
            client_auth = (f"        ssl_verify_client on;\n"
                           f"        ssl_client_certificate {m.client_ca_cert};\n")
        blocks.append(SERVER_BLOCK.format(port=port, cert=cert, key=key, client_auth=client_auth,
                                          http2=" http2" if http2 else "",
                                          locations=LOCATIONS.format(tmp=tmp)))
    return NGINX_TLS_CONF.format(tmp=tmp, servers="".join(blocks), status_port=status_port,
                                 http_settings=harness.NGINX_HTTP_SETTINGS.format(tmp=tmp))


@contextlib.contextmanager
def nginx_tls_server(material, extra=(), http2=False):
    """Starts nginx in the foreground on free loopback ports; yields an NginxTLS.

    The main server ("server") has the localhost certificate; EXTRA names more servers from
    EXTRA_SERVERS, each on its own port with the same locations. HTTP/1.1 only unless HTTP2
    (then h2 and http/1.1 by ALPN), TLS 1.2 and 1.3, a shared session cache and session
    tickets, so that sessions can resume. /big serves BIG_BODY_SIZE bytes."""
    unknown = [name for name in extra if name not in EXTRA_SERVERS]
    if unknown:
        raise ValueError(f"unknown nginx TLS servers {unknown}; known: {sorted(EXTRA_SERVERS)}")
    tmp = tempfile.mkdtemp(prefix="punctual-nginx-tls-")
    os.makedirs(os.path.join(tmp, "www"))
    with open(os.path.join(tmp, "www", "chunked.txt"), "wb") as f:
        f.write(harness.CHUNKED_BODY)
    with open(os.path.join(tmp, "www", "big.bin"), "wb") as f:
        f.write(bytes(i % 251 for i in range(BIG_BODY_SIZE)))
    proc = None
    try:
        for _ in range(5):  # a free port may be taken between probe and bind
            ports = {name: harness.free_port() for name in ("server", *extra)}
            status_port = harness.free_port()
            if len(set(ports.values()) | {status_port}) != len(ports) + 1:
                continue
            with open(os.path.join(tmp, "nginx.conf"), "w", encoding="utf-8") as f:
                f.write(_config(material, tmp, ports, status_port, http2))
            proc = subprocess.Popen(
                [harness.NGINX, "-p", tmp, "-c", "nginx.conf", "-g", "daemon off;"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                for port in (status_port, *ports.values()):
                    harness.wait_for_port(port, proc)
                break
            except RuntimeError:
                harness.stop_process(proc)
                proc = None
        if proc is None:
            log = NginxTLS(tmp, {"server": 0}, 0, None).error_log()
            raise RuntimeError(f"could not start nginx with TLS on free ports; error.log: {log[-500:]!r}")
        yield NginxTLS(tmp, ports, status_port, proc)
    finally:
        if proc is not None:
            harness.stop_process(proc)
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------
# punctual serve over TLS

FINGERPRINT_LINE = re.compile(r"^tls: self-signed certificate, SHA-256 fingerprint ([0-9A-Fa-f:]+)\s*$", re.M)


class TLSServe:
    def __init__(self, port, proc, output):
        self.port = port
        self.proc = proc
        self.output = output  # what serve printed up to its `listening on` line

    def url(self, path="/", host="127.0.0.1"):
        return f"https://{host}:{self.port}{path}"

    def fingerprint(self):
        """The SHA-256 fingerprint `--tls-self-signed` announced, as lowercase hex without colons."""
        m = FINGERPRINT_LINE.search(self.output)
        check(m is not None, f"serve announced no self-signed certificate fingerprint: {self.output!r}")
        return m.group(1).replace(":", "").lower()


@contextlib.contextmanager
def tls_serve(binary, *args, startup_timeout_s=5.0):
    """Runs `punctual serve --port 0 ARGS` until the block ends; yields a TLSServe.

    Its output goes to a file, not a pipe: serve prints its `tls:` line and its `listening on`
    line together, and harness.read_listening_port, which waits on the pipe with a selector,
    cannot see a second line that its first readline already buffered."""
    tmp = tempfile.mkdtemp(prefix="punctual-serve-tls-")
    out_path = os.path.join(tmp, "serve.out")
    proc = None
    try:
        with open(out_path, "w", encoding="utf-8") as out:
            proc = subprocess.Popen([binary, "serve", "--port", "0", *args], stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + startup_timeout_s
        port = None
        while port is None:
            with open(out_path, encoding="utf-8", errors="replace") as f:
                output = f.read()
            m = re.search(r"^listening on 127\.0\.0\.1:(\d+)$", output, re.M)
            if m:
                port = int(m.group(1))
            elif proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"punctual serve {' '.join(args)} did not report its port "
                                   f"(exit {proc.poll()}): {output[-500:]!r}")
            else:
                time.sleep(0.01)
        yield TLSServe(port, proc, output)
    finally:
        if proc is not None:
            harness.stop_process(proc)
        shutil.rmtree(tmp, ignore_errors=True)


def certificate_sha256(path):
    """SHA-256 of the DER form of the PEM certificate at PATH, lowercase hex."""
    with open(path, encoding="ascii") as f:
        return hashlib.sha256(ssl.PEM_cert_to_DER_cert(f.read())).hexdigest()


def served_certificate_sha256(port, server_hostname="localhost"):
    """SHA-256 of the DER certificate a TLS server on PORT presents, lowercase hex; nothing is
    verified (the certificate is what is being looked at)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=3.0) as raw:
        with ctx.wrap_socket(raw, server_hostname=server_hostname) as s:
            return hashlib.sha256(s.getpeercert(binary_form=True)).hexdigest()


# ---------------------------------------------------------------------------
# raw exchanges over TLS, to learn what the servers really send

def client_context(cafile, cert=None, key=None):
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.set_alpn_protocols(["http/1.1"])
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx


def tls_exchange(port, request, cafile, server_hostname="localhost", cert=None, key=None, timeout_s=3.0):
    """Sends REQUEST once over a fresh TLS connection; returns the raw response, framed as
    harness.exchange frames it (Content-Length, chunked, or the close)."""
    ctx = client_context(cafile, cert, key)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as raw:
        with ctx.wrap_socket(raw, server_hostname=server_hostname) as s:
            s.sendall(request)
            data = b""
            while True:
                head_end = data.find(b"\r\n\r\n")
                if head_end >= 0:
                    head = data[:head_end].lower()
                    body = data[head_end + 4:]
                    m = re.search(rb"\r\ncontent-length:\s*(\d+)", head)
                    if m and len(body) >= int(m.group(1)):
                        return data[:head_end + 4 + int(m.group(1))]
                    if b"transfer-encoding: chunked" in head and body.endswith(b"0\r\n\r\n"):
                        return data
                try:
                    chunk = s.recv(65536)
                except (ssl.SSLEOFError, ConnectionResetError):
                    return data
                if not chunk:
                    return data
                data += chunk


class _Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []


@contextlib.contextmanager
def tls_recording_server(cert, key, response=b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n"):
    """harness.recording_server behind TLS: a loopback server, certificate CERT, that records
    every request head (and body) it receives, decrypted. Yields (port, recorder)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["http/1.1"])
    recorder = _Recorder()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.settimeout(5.0)
            try:
                conn = ctx.wrap_socket(self.request, server_side=True)
            except (OSError, ssl.SSLError):
                return
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    try:
                        data = conn.recv(65536)
                    except (OSError, ssl.SSLError):
                        return
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                head += b"\r\n\r\n"
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                while len(buf) < length:
                    try:
                        data = conn.recv(65536)
                    except (OSError, ssl.SSLError):
                        return
                    if not data:
                        return
                    buf += data
                body, buf = buf[:length], buf[length:]
                with recorder.lock:
                    recorder.requests.append(head + body)
                try:
                    conn.sendall(response)
                except (OSError, ssl.SSLError):
                    return
                if b"connection: close" in head.lower():
                    return

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], recorder
    finally:
        server.shutdown()
        server.server_close()


def tls_request_bytes(binary, material, path, extra_args=(), port_for=None, host="localhost"):
    """The exact request punctual sends over TLS for https://HOST:PORT/PATH with EXTRA_ARGS,
    recorded behind TLS (so whatever punctual does differently for https shows). The Host
    header carries the port, so the recorded request is rewritten for PORT_FOR when given."""
    with tls_recording_server(material.server_cert, material.server_key) as (port, recorder):
        result = harness.run_punctual(binary, ["-t1", "-c1", "-d500ms", "-R20", "--cacert", material.ca_cert,
                                               *extra_args, f"https://{host}:{port}{path}"], timeout_s=20)
        harness.require_report(result)
        with recorder.lock:
            requests = list(recorder.requests)
    check(requests, "the TLS recording server received no request")
    check(all(r == requests[0] for r in requests), f"requests differ: {requests[:3]}")
    req = requests[0]
    if port_for is not None:
        req = req.replace(f"{host}:{port}".encode(), f"{host}:{port_for}".encode())
    return req
