"""A hostile h2c server for the HTTP/2 client's tests (stdlib only, raw frames, no HPACK).

It speaks just enough HTTP/2 with prior knowledge to answer requests by stream id: it sends
its SETTINGS first, acknowledges the client's SETTINGS and PINGs, and answers each request (a
HEADERS frame, ending at END_STREAM on it or on a later DATA frame) with a HEADERS frame whose
one byte 0x88 is HPACK's static ":status: 200" and a DATA frame carrying BODY with END_STREAM.
It never decodes a header block: each request is known by its stream id only.

Each instance misbehaves in one way, chosen by its constructor:

- normal (no option): answers everything;
- goaway_after=N: answers the first N streams of each connection; at the first stream above
  them it sends GOAWAY(last-stream-id = the N-th stream, NO_ERROR), answers nothing more and
  closes the connection ~100 ms later;
- rst_every=K: every K-th stream (counted over the whole server) gets RST_STREAM
  (INTERNAL_ERROR) instead of its response;
- zero_window=True: its SETTINGS make the stream's initial window 0 and it never sends
  WINDOW_UPDATE, so a request body can never be sent (a GET is still answered);
- malformed_after=M: answers the first M streams of each connection; at the next one it sends
  a frame that breaks the protocol (MALFORMED_FRAMES) instead of the response, answers nothing
  more on that connection, and closes it after close_after_break_s (None: only when the
  client closes);
- max_concurrent=L: its SETTINGS say MAX_CONCURRENT_STREAMS = L; it records the most streams
  one connection had open at once (from a request's HEADERS until the server's END_STREAM or
  RST_STREAM, or the client's RST_STREAM).

delay_s holds every response that long after its request ended (on the connection's own
thread, which keeps reading meanwhile, so streams a client opens early are seen at once).

The server listens on 127.0.0.1 on an ephemeral port, runs in background threads, and is
used as a context manager: `with HostileServer(rst_every=5) as server: ... server.port`.
Everything it saw is in server.stats (read it under server.lock, or after the exit).
"""

import select
import socket
import threading
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

DATA = 0x0
HEADERS = 0x1
PRIORITY = 0x2
RST_STREAM = 0x3
SETTINGS = 0x4
PUSH_PROMISE = 0x5
PING = 0x6
GOAWAY = 0x7
WINDOW_UPDATE = 0x8
CONTINUATION = 0x9

END_STREAM = 0x1
ACK = 0x1
END_HEADERS = 0x4

SETTINGS_MAX_CONCURRENT_STREAMS = 0x3
SETTINGS_INITIAL_WINDOW_SIZE = 0x4

NO_ERROR = 0x0
PROTOCOL_ERROR = 0x1
INTERNAL_ERROR = 0x2
FRAME_SIZE_ERROR = 0x6

STATUS_200 = b"\x88"  # HPACK: indexed header field, static table index 8 (":status: 200")

# Frames that break the protocol, each a connection error for the client (RFC 9113):
MALFORMED_FRAMES = {
    # DATA must be on a stream (section 6.1): PROTOCOL_ERROR.
    "data_on_stream_0": lambda: frame(DATA, 0, 0, b"oops"),
    # SETTINGS' length must be a multiple of 6 (section 6.5): FRAME_SIZE_ERROR.
    "settings_length": lambda: frame(SETTINGS, 0, 0, b"\x00\x03\x00\x00\x00"),
}


def frame(kind, flags, stream_id, payload=b""):
    """One HTTP/2 frame: the 9-byte header (24-bit length, type, flags, 31-bit stream id), then
    the payload."""
    return (len(payload).to_bytes(3, "big") + bytes([kind, flags])
            + (stream_id & 0x7FFFFFFF).to_bytes(4, "big") + payload)


def settings_frame(entries):
    """A SETTINGS frame of (identifier, value) entries."""
    return frame(SETTINGS, 0, 0, b"".join(i.to_bytes(2, "big") + v.to_bytes(4, "big") for i, v in entries))


def response_frames(stream_id, body):
    """The whole response to one request: HEADERS (:status 200), then DATA with END_STREAM."""
    return frame(HEADERS, END_HEADERS, stream_id, STATUS_200) + frame(DATA, END_STREAM, stream_id, body)


def response_size(body):
    """The bytes of response_frames(_, BODY): two frame headers, the status byte, the body."""
    return 9 + len(STATUS_200) + 9 + len(body)


class Stats:
    """What the server saw and did, over all its connections."""

    def __init__(self):
        self.connections = 0
        self.streams = 0            # requests begun (a HEADERS frame opening a new stream)
        self.completed = 0          # requests whose END_STREAM arrived
        self.to_answer = 0          # with rst_every: requests due an answer, every K-th of them reset
        self.answered = 0           # responses sent
        self.reset = 0              # RST_STREAM(INTERNAL_ERROR) sent instead of a response
        self.goaways = 0            # GOAWAYs sent
        self.malformed = 0          # protocol-breaking frames sent
        self.abandoned = 0          # streams left unanswered after a GOAWAY or a broken frame
        self.request_bytes = 0      # 9 + length of every HEADERS, CONTINUATION and DATA frame on a stream
        self.stream_bytes = {}      # (connection index, stream id): those bytes, per stream
        self.max_open = 0           # most streams one connection had open at once
        self.client_data_frames = 0  # DATA frames the client sent on a stream
        self.client_rst = 0         # RST_STREAM frames the client sent
        self.client_goaway_codes = []  # the error code of each GOAWAY the client sent
        self.bad_preface = 0


class _Connection:
    def __init__(self, index, sock):
        self.index = index
        self.sock = sock
        self.buf = b""
        self.preface_seen = False
        self.seen_streams = set()
        self.open = set()
        self.abandoned = set()        # streams above a GOAWAY or a broken frame: never answered
        self.stream_count = 0
        self.goaway_sent = False
        self.broken = False
        self.close_at = None
        self.continuation_of = None   # stream whose header block goes on in CONTINUATION frames
        self.continuation_ends = False  # ... and whose request ends with that block
        self.pending = []             # (due monotonic time, stream id)


class HostileServer:
    def __init__(self, goaway_after=None, rst_every=None, zero_window=False, malformed_after=None,
                 malformed="data_on_stream_0", close_after_break_s=None, max_concurrent=None,
                 delay_s=0.0, body=b"hello\n", goaway_close_s=0.1):
        if malformed not in MALFORMED_FRAMES:
            raise ValueError(f"unknown malformed frame {malformed!r}")
        self.goaway_after = goaway_after
        self.rst_every = rst_every
        self.zero_window = zero_window
        self.malformed_after = malformed_after
        self.malformed = malformed
        self.close_after_break_s = close_after_break_s
        self.max_concurrent = max_concurrent
        self.delay_s = delay_s
        self.body = body
        self.goaway_close_s = goaway_close_s
        self.lock = threading.Lock()
        self.stats = Stats()
        self._stop = threading.Event()
        self._drain_deadline = 0.0
        self._threads = []
        self._listener = None
        self.port = None

    # -- life

    def __enter__(self):
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self._listener.settimeout(0.05)
        self.port = self._listener.getsockname()[1]
        t = threading.Thread(target=self._accept_loop, name="h2-hostile-accept", daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def __exit__(self, *exc):
        # Each connection reads what the client sent before it went (its last RST_STREAMs, its
        # GOAWAY) until it is quiet, so the counts are whole once this returns.
        self._drain_deadline = time.monotonic() + 1.0
        self._stop.set()
        self._threads[0].join(timeout=5.0)  # the accept loop first: then the list is whole
        for t in self._threads[1:]:
            t.join(timeout=5.0)
        self._listener.close()
        return False

    def url(self, path="/"):
        return f"http://127.0.0.1:{self.port}{path}"

    def settings(self):
        entries = []
        if self.max_concurrent is not None:
            entries.append((SETTINGS_MAX_CONCURRENT_STREAMS, self.max_concurrent))
        if self.zero_window:
            entries.append((SETTINGS_INITIAL_WINDOW_SIZE, 0))
        return entries

    def _accept_loop(self):
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                index = self.stats.connections
                self.stats.connections += 1
            t = threading.Thread(target=self._serve, args=(_Connection(index, sock),),
                                 name=f"h2-hostile-{index}", daemon=True)
            t.start()
            self._threads.append(t)

    # -- one connection

    def _serve(self, conn):
        sock = conn.sock
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(2.0)  # bounds sendall; reads wait in select
            sock.sendall(settings_frame(self.settings()))
            while True:
                now = time.monotonic()
                if conn.close_at is not None and now >= conn.close_at:
                    break
                stopping = self._stop.is_set()
                if stopping and now >= self._drain_deadline:
                    break
                wake = now + 0.05
                if conn.pending:
                    wake = min(wake, min(due for due, _ in conn.pending))
                if conn.close_at is not None:
                    wake = min(wake, conn.close_at)
                readable, _, _ = select.select([sock], [], [], max(0.0, wake - now))
                if readable:
                    try:
                        data = sock.recv(65536)
                    except (ConnectionResetError, socket.timeout):
                        break
                    if not data:
                        break
                    conn.buf += data
                    if not self._on_bytes(conn):
                        break
                elif stopping:
                    break  # stopping, and the client has nothing more to say
                self._send_due(conn)
        except OSError:
            pass  # the client went away mid-write: nothing to record
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def _on_bytes(self, conn):
        """Handles every whole frame in the buffer; False to close the connection."""
        if not conn.preface_seen:
            if len(conn.buf) < len(PREFACE):
                return True
            if conn.buf[:len(PREFACE)] != PREFACE:
                with self.lock:
                    self.stats.bad_preface += 1
                return False
            conn.buf = conn.buf[len(PREFACE):]
            conn.preface_seen = True
        while len(conn.buf) >= 9:
            length = int.from_bytes(conn.buf[0:3], "big")
            if len(conn.buf) < 9 + length:
                break
            kind, flags = conn.buf[3], conn.buf[4]
            stream_id = int.from_bytes(conn.buf[5:9], "big") & 0x7FFFFFFF
            payload = conn.buf[9:9 + length]
            conn.buf = conn.buf[9 + length:]
            self._on_frame(conn, kind, flags, stream_id, payload)
        return True

    def _on_frame(self, conn, kind, flags, stream_id, payload):
        if kind in (HEADERS, CONTINUATION, DATA) and stream_id != 0:
            with self.lock:
                self.stats.request_bytes += 9 + len(payload)
                key = (conn.index, stream_id)
                self.stats.stream_bytes[key] = self.stats.stream_bytes.get(key, 0) + 9 + len(payload)
        if kind == SETTINGS:
            if not flags & ACK:
                conn.sock.sendall(frame(SETTINGS, ACK, 0))
        elif kind == PING:
            if not flags & ACK:
                conn.sock.sendall(frame(PING, ACK, 0, payload))
        elif kind == HEADERS and stream_id != 0:
            if stream_id not in conn.seen_streams:
                self._on_new_stream(conn, stream_id)
            if flags & END_HEADERS:
                if flags & END_STREAM:
                    self._on_request(conn, stream_id)
            else:
                conn.continuation_of = stream_id
                conn.continuation_ends = bool(flags & END_STREAM)
        elif kind == CONTINUATION:
            if stream_id == conn.continuation_of and flags & END_HEADERS:
                conn.continuation_of = None
                if conn.continuation_ends:
                    self._on_request(conn, stream_id)
        elif kind == DATA and stream_id != 0:
            with self.lock:
                self.stats.client_data_frames += 1
            if payload and not self.zero_window and not conn.broken:
                # Give the connection's window back (the stream's ends with the request).
                conn.sock.sendall(frame(WINDOW_UPDATE, 0, 0, len(payload).to_bytes(4, "big")))
            if flags & END_STREAM:
                self._on_request(conn, stream_id)
        elif kind == RST_STREAM:
            with self.lock:
                self.stats.client_rst += 1
            conn.open.discard(stream_id)
            conn.pending = [(due, sid) for due, sid in conn.pending if sid != stream_id]
        elif kind == GOAWAY:
            code = int.from_bytes(payload[4:8], "big") if len(payload) >= 8 else None
            with self.lock:
                self.stats.client_goaway_codes.append(code)
        # WINDOW_UPDATE, PRIORITY and anything else: ignored.

    def _on_new_stream(self, conn, stream_id):
        conn.seen_streams.add(stream_id)
        conn.stream_count += 1
        conn.open.add(stream_id)
        with self.lock:
            self.stats.streams += 1
            self.stats.max_open = max(self.stats.max_open, len(conn.open))
        if conn.goaway_sent or conn.broken:
            conn.abandoned.add(stream_id)
            with self.lock:
                self.stats.abandoned += 1
            return
        if self.goaway_after is not None and conn.stream_count > self.goaway_after:
            # The first stream above N: GOAWAY naming the N-th stream as the last one processed.
            last = max((s for s in conn.seen_streams if s != stream_id), default=0)
            conn.sock.sendall(frame(GOAWAY, 0, 0, last.to_bytes(4, "big") + NO_ERROR.to_bytes(4, "big")))
            conn.goaway_sent = True
            conn.abandoned.add(stream_id)
            conn.close_at = time.monotonic() + self.goaway_close_s
            with self.lock:
                self.stats.goaways += 1
                self.stats.abandoned += 1
            return
        if self.malformed_after is not None and conn.stream_count > self.malformed_after:
            conn.sock.sendall(MALFORMED_FRAMES[self.malformed]())
            conn.broken = True
            conn.abandoned.add(stream_id)
            if self.close_after_break_s is not None:
                conn.close_at = time.monotonic() + self.close_after_break_s
            with self.lock:
                self.stats.malformed += 1
                self.stats.abandoned += 1

    def _on_request(self, conn, stream_id):
        """The request on STREAM_ID has ended: answer it (now or after delay_s), reset it, or
        leave it (after a GOAWAY or a broken frame)."""
        with self.lock:
            self.stats.completed += 1
        if stream_id not in conn.open or stream_id in conn.abandoned or conn.broken:
            return
        if self.delay_s > 0:
            conn.pending.append((time.monotonic() + self.delay_s, stream_id))
        else:
            self._answer(conn, stream_id)

    def _send_due(self, conn):
        if not conn.pending:
            return
        now = time.monotonic()
        due = [sid for t, sid in conn.pending if t <= now]
        conn.pending = [(t, sid) for t, sid in conn.pending if t > now]
        for sid in due:
            if sid in conn.open and not conn.broken:
                self._answer(conn, sid)

    def _answer(self, conn, stream_id):
        reset = False
        with self.lock:
            if self.rst_every is not None:
                self.stats.to_answer += 1
                reset = self.stats.to_answer % self.rst_every == 0
        if reset:
            conn.sock.sendall(frame(RST_STREAM, 0, stream_id, INTERNAL_ERROR.to_bytes(4, "big")))
        else:
            conn.sock.sendall(response_frames(stream_id, self.body))
        conn.open.discard(stream_id)
        with self.lock:
            if reset:
                self.stats.reset += 1
            else:
                self.stats.answered += 1
