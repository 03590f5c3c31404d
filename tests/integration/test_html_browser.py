"""The HTML reports as a person sees them: rendered by a real headless chromium.

Two pages are made: the demo's (`punctual demo --json D/demo.json --html D/demo.html`) and a run's
against `punctual serve` with one 400 ms stall (`punctual run ... --html D/run.html`). Each page
is opened from file:// three times: once for a screenshot (which must not be blank), once for
its DOM (`--dump-dom`: the charts, their series and, for the run, the worst second and where
the chart puts its peak, against the JSON of the same run), and once as a copy with a measuring
script appended (the laid-out boxes of every chart's labels: inside the chart, not on top of
each other). The first two runs also log chromium's console (no script error may show) and
its network log (no request may leave the file), and the page's source is searched for any
reference to another resource.

chromium's own background requests (updates, accounts...) are in the network log too, under
"initiator": "not an origin"; a request made by the page carries the page's origin (file://,
opaque: "null") instead. A probe page with an image on 127.0.0.1 and a script error proves,
with this chromium, that both detectors see what they look for. No host resolves
(--host-resolver-rules), so no request leaves chromium at all, not even its own.

Screenshots and every other file stay in a temp dir. Needs Debian's chromium.

Usage: python3 test_html_browser.py PATH_TO_PUNCTUAL
"""

import html
import html.parser
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, check_eq  # noqa: E402

WINDOW = "1200,2000"
CHROMIUM_TIMEOUT_S = 60
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--no-proxy-server",
    # No host resolves, not even 127.0.0.1: chromium's own background requests (and any of the
    # page's) fail before a socket is opened, yet they are logged first (the probe proves it).
    "--host-resolver-rules=MAP * ~NOTFOUND",
    f"--window-size={WINDOW}",
    "--enable-logging=stderr", "--v=0",
    "--net-log-capture-mode=Default",
]

RUN_CHARTS = {  # svg id -> series (data-series) that must be drawn
    "spectrum": ("response time", "service time"),
    "latency-over-time": ("response p99",),
    "load-over-time": ("planned", "sent", "completed"),
}
COMPARE_CHARTS = {  # svg id -> series of `punctual compare --html`
    "compare-spectra": ("base", "candidate"),
    "compare-change": ("base", "candidate", "base + low end of the change",
                       "base + high end of the change", "base + threshold"),
}
DEMO_SERIES = ("closed (as wrk)", "closed, reconstructed", "open (punctual)", "truth (from stall log)")


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


# ---------------------------------------------------------------------------
# PNG (standard library only): 8-bit greyscale, RGB, grey+alpha or RGBA, not interlaced

def decode_png(data):
    """Returns (width, height, channels, rows) with each row a bytearray of width*channels."""
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file")
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    check(header is not None, "PNG without IHDR")
    width, height, depth, colour, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    check(depth == 8 and channels is not None and interlace == 0,
          f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    check(len(raw) == height * (stride + 1), f"PNG data of {len(raw)} bytes for {width}x{height}")
    rows, prev, p = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[p], bytearray(raw[p + 1:p + 1 + stride])
        p += stride + 1
        if kind == 1:  # Sub
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:  # Up
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif kind == 3:  # Average
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:  # Paeth
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif kind != 0:
            raise AssertionError(f"unknown PNG filter type {kind}")
        rows.append(line)
        prev = line
    return width, height, channels, rows


def sample_pixels(png, step=5):
    """(r, g, b) of every step-th pixel of every step-th row."""
    width, height, channels, rows = png
    out = []
    for y in range(0, height, step):
        row = rows[y]
        for x in range(0, width, step):
            i = x * channels
            if channels >= 3:
                out.append((row[i], row[i + 1], row[i + 2]))
            else:
                out.append((row[i],) * 3)
    return out


def check_not_blank(png_path, colours=()):
    """The screenshot has structure: variance of the sampled luminance above a threshold, and
    some pixels that are not near-white. COLOURS ('#rrggbb'): each must be drawn somewhere."""
    with open(png_path, "rb") as f:
        png = decode_png(f.read())
    width, height = png[0], png[1]
    check_eq(f"{width},{height}", WINDOW, "screenshot size")
    pixels = sample_pixels(png)
    lum = [0.299 * r + 0.587 * g + 0.114 * b for r, g, b in pixels]
    mean = sum(lum) / len(lum)
    variance = sum((v - mean) ** 2 for v in lum) / len(lum)
    dark = sum(1 for v in lum if v < 200) / len(lum)
    print(f"     {os.path.basename(png_path)}: {len(pixels)} pixels sampled, luminance mean "
          f"{mean:.1f}, variance {variance:.0f}, {100 * dark:.2f}% not near-white", flush=True)
    check(variance > 100, f"luminance variance {variance:.1f} <= 100: the page looks blank")
    check(dark > 0.005, f"only {100 * dark:.3f}% of the sampled pixels are not near-white")
    if colours:
        dense = sample_pixels(png, step=2)
        for colour in colours:
            want = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
            n = sum(1 for p in dense if max(abs(p[k] - want[k]) for k in range(3)) <= 24)
            check(n >= 10, f"only {n} of {len(dense)} pixels sampled have the series colour {colour}")


# ---------------------------------------------------------------------------
# chromium

def chromium_run(chromium, work, tag, page, mode):
    """Runs chromium once on file://PAGE; MODE is 'screenshot' or 'dump-dom'. Returns
    {stdout, stderr, netlog, png}."""
    profile = tempfile.mkdtemp(prefix=f"profile-{tag}-", dir=work)
    netlog = os.path.join(work, f"{tag}.netlog.json")
    cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--log-net-log={netlog}"]
    png = None
    if mode == "screenshot":
        png = os.path.join(work, f"{tag}.png")
        cmd.append(f"--screenshot={png}")
    else:
        cmd.append("--dump-dom")
    cmd.append("file://" + page)
    try:
        # At a lower priority: make test runs this beside other tests, and a 200 req/s run
        # beside chromium's start-up (a dozen processes) once stalled for 104 ms.
        proc = subprocess.run(["nice", "-n", "10", *cmd], capture_output=True, text=True,
                              timeout=CHROMIUM_TIMEOUT_S, cwd=work)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if proc.returncode != 0:
        raise AssertionError(f"chromium exited {proc.returncode} on {tag}: {proc.stderr[-1500:]}")
    if png is not None:
        check(os.path.exists(png) and os.path.getsize(png) > 0, f"chromium wrote no screenshot for {tag}")
    return {"stdout": proc.stdout, "stderr": proc.stderr, "netlog": netlog, "png": png}


CONSOLE_LINE = re.compile(r":CONSOLE(?:\(\d+\))?(?::\d+)?\]")


def console_problems(stderr):
    """Lines of chromium's log that show the page's console: any console message (the report has
    no script, so any is unexpected; chromium logs console.error at INFO too), an uncaught
    exception or a syntax error."""
    return [line for line in stderr.splitlines()
            if CONSOLE_LINE.search(line) or "Uncaught" in line or "SyntaxError" in line]


def load_netlog(path):
    check(os.path.exists(path), f"chromium wrote no network log at {path}")
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        return json.loads(text)
    except ValueError:  # cut short: close the events array
        return json.loads(text.rstrip().rstrip(",") + "]}")


def page_requests(netlog):
    """(url, initiator) of every URL request the page made, and how many of chromium's own were
    ignored. chromium's own carry "initiator": "not an origin"; the page's carry its origin
    ("null" for file://) and a network isolation key of file://."""
    names = {v: k for k, v in netlog["constants"]["logEventTypes"].items()}
    page, own = [], 0
    for event in netlog.get("events", []):
        if names.get(event.get("type")) != "URL_REQUEST_START_JOB":
            continue
        params = event.get("params") or {}
        url = params.get("url")
        if not url:
            continue
        initiator = params.get("initiator", "")
        key = params.get("network_isolation_key", "")
        local = url.startswith(("http://127.0.0.1", "https://127.0.0.1", "http://localhost",
                                "https://localhost", "ws:", "wss:"))
        if initiator != "not an origin" or "file://" in key or local:
            page.append((url, initiator))
        else:
            own += 1
    return page, own


# ---------------------------------------------------------------------------
# the DOM, from --dump-dom

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = dict(attrs)
        self.parent = parent
        self.children = []
        self.text_parts = []

    def text(self):
        return "".join(self.text_parts) + "".join(c.text() for c in self.children)

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def find_all(self, tag=None, **attrs):
        return [n for n in self.walk() if (tag is None or n.tag == tag) and
                all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]


class TreeBuilder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Node(tag, attrs, self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.current = node.parent

    def handle_data(self, data):
        self.current.text_parts.append(data)  # order within a node does not matter here


def parse_dom(text):
    builder = TreeBuilder()
    builder.feed(text)
    builder.close()
    return builder.root


def chart(dom, chart_id):
    svgs = [n for n in dom.find_all("svg") if n.attrs.get("id") == chart_id]
    check(len(svgs) == 1, f"{len(svgs)} <svg id=\"{chart_id}\"> in the page")
    return svgs[0]


def series_paths(svg):
    return {p.attrs["data-series"]: p for p in svg.find_all("path") if "data-series" in p.attrs}


PATH_POINT = re.compile(r"([ML])\s*(-?[0-9.]+)[ ,]+(-?[0-9.]+)")


def path_points(path):
    d = path.attrs.get("d", "")
    points = [(float(x), float(y)) for _, x, y in PATH_POINT.findall(d)]
    check(points, f"series {path.attrs.get('data-series')!r}: no points in d={d[:80]!r}")
    return points


def parse_number(text):
    try:
        return float(text.strip().replace(",", "").rstrip("%"))
    except ValueError:
        return None


def axis_maps(svg):
    """Pixel -> data maps for a linear chart, from its grid lines and their labels: the
    vertical grid lines (in order) carry the x tick labels, the horizontal ones the y labels;
    the y unit comes from the y title ('latency (ms)')."""
    grid = [g for g in svg.find_all("g") if g.attrs.get("stroke") == "#e3e3e3"]
    check(grid, "no grid group (stroke #e3e3e3)")
    lines = [ln for ln in grid[0].children if ln.tag == "line"]
    horizontal = [float(ln.attrs["y1"]) for ln in lines if ln.attrs["y1"] == ln.attrs["y2"]]
    vertical = [float(ln.attrs["x1"]) for ln in lines if ln.attrs["x1"] == ln.attrs["x2"]
                and ln.attrs["y1"] != ln.attrs["y2"]]
    labels = {a: [t.text() for t in g.children if t.tag == "text"]
              for g in svg.find_all("g") for a in [g.attrs.get("text-anchor")] if a in ("end", "middle")}
    y_labels = [parse_number(t) for t in labels.get("end", [])]
    x_texts = labels.get("middle", [])
    x_labels = [parse_number(t) for t in x_texts[:len(vertical)]]
    check(len(y_labels) == len(horizontal) and None not in y_labels and len(y_labels) >= 2,
          f"y labels {labels.get('end')} do not match {len(horizontal)} horizontal grid lines")
    check(len(x_labels) == len(vertical) and None not in x_labels and len(x_labels) >= 2,
          f"x labels {x_texts} do not match {len(vertical)} vertical grid lines")
    y_title = " ".join(t.text() for t in svg.find_all("text") if "transform" in t.attrs)
    unit = 1.0
    m = re.search(r"\((ns|µs|us|ms|s)\)$", y_title.strip())
    if m:
        unit = {"ns": 1, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(1)]

    def linear(p0, p1, v0, v1):
        return lambda p: v0 + (p - p0) * (v1 - v0) / (p1 - p0)

    to_x = linear(vertical[0], vertical[-1], x_labels[0], x_labels[-1])
    to_y = linear(horizontal[0], horizontal[-1], y_labels[0] * unit, y_labels[-1] * unit)
    return to_x, to_y, (x_labels[-1], y_labels[-1] * unit), y_title


# ---------------------------------------------------------------------------
# layout, measured by chromium itself on a copy of the page

MEASURE_JS = r"""
(function () {
  function box(el, svg, sx, sy) {
    var r = el.getBoundingClientRect(), s = svg.getBoundingClientRect();
    return [(r.left - s.left) * sx, (r.top - s.top) * sy, (r.right - s.left) * sx, (r.bottom - s.top) * sy];
  }
  var out = {scrollWidth: document.documentElement.scrollWidth,
             clientWidth: document.documentElement.clientWidth, charts: []};
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var vb = svg.viewBox.baseVal, s = svg.getBoundingClientRect();
    var sx = vb && vb.width ? vb.width / s.width : 1, sy = vb && vb.height ? vb.height / s.height : 1;
    var c = {id: svg.id, width: vb && vb.width ? vb.width : s.width,
             height: vb && vb.height ? vb.height : s.height, texts: [], swatches: [], paths: []};
    svg.querySelectorAll('text').forEach(function (t) {
      c.texts.push({text: t.textContent, box: box(t, svg, sx, sy), legend: t.parentNode === svg});
    });
    Array.prototype.forEach.call(svg.children, function (l) {
      if (l.tagName === 'line') c.swatches.push([+l.getAttribute('x1'), +l.getAttribute('y1')]);
    });
    svg.querySelectorAll('path[data-series]').forEach(function (p) {
      c.paths.push({name: p.getAttribute('data-series'), points: +p.getAttribute('data-points'),
                    length: p.getTotalLength()});
    });
    out.charts.push(c);
  });
  var pre = document.createElement('pre');
  pre.id = 'punctual-measure';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


def layout_problems(measure, gaps):
    """What a reader would see as broken: a label outside its chart (cut off), two labels on top of
    each other, a legend label running into the next entry's swatch, a series drawn with no
    length, or a page wider than the window. GAPS gets every legend gap seen (px)."""
    problems = []
    if measure["scrollWidth"] > measure["clientWidth"] + 1:
        problems.append(f"the page is {measure['scrollWidth']} px wide in a {measure['clientWidth']} px "
                        "window (horizontal scrolling)")
    for c in measure["charts"]:
        w, h = c["width"], c["height"]
        for t in c["texts"]:
            x0, y0, x1, y1 = t["box"]
            if x0 < -0.5 or y0 < -0.5 or x1 > w + 0.5 or y1 > h + 0.5:
                problems.append(f"#{c['id']}: label {t['text']!r} at x {x0:.1f}..{x1:.1f}, y "
                                f"{y0:.1f}..{y1:.1f} is outside the {w:g}x{h:g} chart (cut off)")
        texts = c["texts"]
        for i, a in enumerate(texts):
            for b in texts[i + 1:]:
                ox = min(a["box"][2], b["box"][2]) - max(a["box"][0], b["box"][0])
                oy = min(a["box"][3], b["box"][3]) - max(a["box"][1], b["box"][1])
                shorter = min(a["box"][3] - a["box"][1], b["box"][3] - b["box"][1])
                # line boxes include the font's ascent and descent: a little vertical overlap of
                # neighbouring labels is no overlap of ink
                if ox > 2 and oy > 0.4 * shorter:
                    problems.append(f"#{c['id']}: labels {a['text']!r} and {b['text']!r} overlap "
                                    f"({ox:.1f} x {oy:.1f} px)")
        # the legend: a swatch (a <line> child of the svg) then the series' name, left to right
        names = {p["name"] for p in c["paths"]}
        legend = [t for t in texts if t["legend"] and t["text"] in names]
        swatches = c["swatches"]
        if len(legend) == len(swatches):
            for i, t in enumerate(legend[:-1]):
                nx, ny = swatches[i + 1]
                gap = nx - t["box"][2]
                if abs(ny - swatches[i][1]) < 1:  # the next entry is on the same row
                    gaps.append(gap)
                    if gap < 4:
                        problems.append(f"#{c['id']}: legend label {t['text']!r} ends at x "
                                        f"{t['box'][2]:.1f}, {gap:.1f} px from the next entry's "
                                        f"swatch at {nx:g} (entries run together)")
        else:
            problems.append(f"#{c['id']}: {len(legend)} legend labels for {len(swatches)} swatches")
        for p in c["paths"]:
            if p["points"] > 1 and not p["length"] > 0:
                problems.append(f"#{c['id']}: series {p['name']!r} has {p['points']} points but "
                                "is drawn with no length")
    return problems


# ---------------------------------------------------------------------------
# static checks of the HTML source and of the DOM

SOURCE_FORBIDDEN = (
    (re.compile(r"""\b(?:src|href|xlink:href|srcset|poster|data)\s*=\s*["']?\s*(?:https?:)?//""", re.I),
     "a reference to another host"),
    (re.compile(r"url\(\s*[\"']?\s*(?!#|data:)", re.I), "a CSS url() that is not a fragment or data:"),
    (re.compile(r"@import", re.I), "@import"),
    (re.compile(r"<link\b", re.I), "<link>"),
    (re.compile(r"<script\b[^>]*\bsrc\s*=", re.I), "<script src>"),
    (re.compile(r"<(?:iframe|object|embed|img|video|audio|image|use)\b[^>]*\b(?:src|href)\s*=\s*"
                r"[\"']?(?!#|data:)", re.I), "an embedded resource"),
)


def check_self_contained_source(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = []
    for pattern, what in SOURCE_FORBIDDEN:
        for m in pattern.finditer(text):
            found.append(f"{what}: {text[max(0, m.start() - 40):m.end() + 40]!r}")
    check(not found, "the HTML source references other resources:\n  " + "\n  ".join(found[:10]))
    print(f"     {os.path.basename(path)}: {len(text)} bytes, no external reference", flush=True)


def check_self_contained_dom(dom):
    found = []
    for n in dom.walk():
        for attr in ("src", "href", "xlink:href", "srcset", "poster", "data"):
            v = n.attrs.get(attr)
            if v is not None and not v.startswith(("#", "data:")):
                found.append(f"<{n.tag} {attr}={v!r}>")
        if n.tag in ("link", "iframe", "object", "embed"):
            found.append(f"<{n.tag}>")
        if n.tag == "style" and re.search(r"@import|url\(\s*[\"']?\s*(?!#|data:)", n.text()):
            found.append("<style> with @import or url()")
    check(not found, f"the DOM references other resources: {found[:10]}")


# ---------------------------------------------------------------------------
# the pages

class Page:
    def __init__(self, tag, html_path, json_path):
        self.tag = tag
        self.html = html_path
        self.json = json_path
        self.shot = None
        self.dump = None
        self.measure = None
        self.dom = None


def make_run_page(binary, work, pages):
    d = os.path.join(work, "run")
    os.makedirs(d)
    json_path, html_path = os.path.join(d, "run.json"), os.path.join(d, "run.html")
    with harness.punctual_serve(binary, "--host", "127.0.0.1", "--stall-at", "1500ms:400ms",
                                "--stall-log", os.path.join(d, "stall.jsonl"), "--duration", "20s") as srv:
        cmd = [binary, "run", "-t1", "-c10", "-R500", "-d4s", "--json", json_path,
               "--html", html_path, "--hgrm", os.path.join(d, "run.hgrm"),
               "--hlog", os.path.join(d, "run.hlog"), srv.url("/")]
        started = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=d)
        wall = time.monotonic() - started
    result = harness.Result(cmd, proc.returncode, proc.stdout, proc.stderr, wall,
                            harness.load_report(json_path) if os.path.exists(json_path) else None)
    # Exit 4 is the run's validity verdict (e.g. send lag on a host busy with other tests): the
    # reports are written all the same, and they are what is judged here.
    check(proc.returncode in (0, 4), f"expected exit 0 or 4\n{result.describe()}")
    check(result.report is not None, f"no JSON report written\n{result.describe()}")
    check(os.path.exists(html_path), f"no HTML report written\n{result.describe()}")
    if proc.returncode == 4:
        failed = [c["name"] for c in result.report["validity"]["checks"]
                  if c["level"] == "gating" and not c["pass"]]
        print(f"     (run exited 4, invalid on {failed}; its reports are judged all the same)", flush=True)
    report = result.report
    page = Page("run", html_path, json_path)
    page.report = report
    pages["run"] = page


def make_compare_page(binary, work, pages):
    """`punctual compare run.json run.json --html`: the run against itself (one workload, no
    second run needed), so the page has both spectra and every row."""
    run = pages["run"]
    html_path = os.path.join(work, "run", "compare.html")
    json_path = os.path.join(work, "run", "compare.json")
    cp = subprocess.run([binary, "compare", run.json, run.json, "--html", html_path, "--json", json_path],
                        capture_output=True, text=True, timeout=60)
    check(cp.returncode in (0, 4), f"compare exited {cp.returncode}: {cp.stderr[-800:]}")
    check(os.path.exists(html_path), f"no compare.html written: {cp.stderr[-800:]}")
    page = Page("compare", html_path, json_path)
    with open(json_path, encoding="utf-8") as f:
        page.report = json.load(f)
    pages["compare"] = page


def check_compare_dom(page):
    for chart_id, wanted in COMPARE_CHARTS.items():
        svg = chart(page.dom, chart_id)
        paths = series_paths(svg)
        for name in wanted:
            check(name in paths, f"#{chart_id}: no series {name!r} (has {sorted(paths)})")
            check(len(path_points(paths[name])) >= 2, f"#{chart_id}: series {name!r} has < 2 points")
    verdicts = [n.text() for n in page.dom.find_all("div") if n.attrs.get("id") == "verdict"]
    check_eq(verdicts, [page.report["verdict"]["line"]], "the verdict line")


SEARCH_CHARTS = {  # the knee: svg id -> series that must be drawn
    "knee-latency": ("p90", "p90 low", "p90 high"),
    "knee-rate": ("offered", "sent", "completed"),
}


def make_search_page(binary, work, pages):
    """A short search (at most 3 steps of 0.5 s) against serve: its knee page. The SLO is lax, so
    that a host busy with other tests still gives the page two steps or more to draw (a step
    that is invalid is run once more)."""
    d = os.path.join(work, "search")
    os.makedirs(d)
    json_path, html_path = os.path.join(d, "search.json"), os.path.join(d, "search.html")
    with harness.punctual_serve(binary, "--duration", "30s") as srv:
        cmd = [binary, "search", "-t1", "--slo", "p90<=10s", "--from", "200", "--max-steps", "3",
               "--step-duration", "500ms", "--step-warmup", "0s", "--json", json_path,
               "--html", html_path, srv.url("/")]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=d)
    check(proc.returncode in (0, 3, 4), f"search exited {proc.returncode}: {proc.stderr[-300:]!r}")
    check(os.path.exists(html_path), f"no search HTML written: {proc.stdout[-500:]!r}")
    page = Page("search", html_path, json_path)
    with open(json_path, encoding="utf-8") as f:
        page.report = json.load(f)
    pages["search"] = page


def check_search_dom(page):
    """Both knee charts, every series with a point per rate tried (a re-run replaces its first
    run), and the SLO's threshold line."""
    steps = len({s["rate_per_s"] for s in page.report["search"]["steps"]})
    check(steps >= 1, "no step")
    for chart_id, wanted in SEARCH_CHARTS.items():
        svg = chart(page.dom, chart_id)
        paths = series_paths(svg)
        for name in wanted:
            check(name in paths, f"#{chart_id}: no series {name!r} (has {sorted(paths)})")
            check_eq(int(paths[name].attrs.get("data-points", "-1")), steps,
                     f"#{chart_id}: points of {name!r}")
    texts = [t.text() for t in chart(page.dom, "knee-latency").find_all("text")]
    check(any("p90<=10s" in t for t in texts), f"#knee-latency: no threshold label (texts {texts[:20]})")
    answer = [n for n in page.dom.find_all("p") if n.attrs.get("id") == "answer"]
    check(len(answer) == 1 and answer[0].text().strip() == page.report["search"]["answer"],
          "the page's answer is not the JSON's")


def start_demo(binary, work):
    """Starts `punctual demo` (about 20 s, mostly waiting on its fixed-rate runs), so the run
    page can be made and rendered meanwhile."""
    d = os.path.join(work, "demo")
    os.makedirs(d)
    json_path, html_path = os.path.join(d, "demo.json"), os.path.join(d, "demo.html")
    cmd = [binary, "demo", "--json", json_path, "--html", html_path]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=d), json_path, html_path


def make_demo_page(demo, pages):
    proc, json_path, html_path = demo
    try:
        proc.stdout_text, proc.stderr_text = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("punctual demo did not end within 90 s")
    proc.stdout, proc.stderr = proc.stdout_text, proc.stderr_text
    check(os.path.exists(json_path) and os.path.exists(html_path),
          f"demo exited {proc.returncode} without writing demo.json and demo.html:\n"
          f"{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
    # Exit 1 is the demo's own verdict (the open run missed the truth, e.g. on a busy host): the
    # page is written all the same, and the page is what is judged here.
    check(proc.returncode in (0, 1), f"demo exited {proc.returncode}: {proc.stderr[-1500:]}")
    if proc.returncode == 1:
        print(f"     (demo exited 1, its verdict: {proc.stderr.strip()[-300:]})", flush=True)
    with open(json_path, encoding="utf-8") as f:
        demo = json.load(f)
    check_eq(list(demo.get("columns", {})), list(DEMO_SERIES), "demo.json columns")
    page = Page("demo", html_path, json_path)
    page.report = demo
    pages["demo"] = page


def render(chromium, work, pages):
    """Every chromium run of every page, two at a time (they are independent)."""
    jobs = []
    for page in pages.values():
        measured = os.path.join(work, f"{page.tag}.measured.html")
        with open(page.html, encoding="utf-8") as f:
            text = f.read()
        check("</body>" in text, f"{page.tag}: no </body> in the page")
        with open(measured, "w", encoding="utf-8") as f:
            f.write(text.replace("</body>", "<script>" + MEASURE_JS + "</script></body>", 1))
        jobs += [(page, "shot", page.html, "screenshot"), (page, "dump", page.html, "dump-dom"),
                 (page, "measure", measured, "dump-dom")]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [(page, kind, pool.submit(chromium_run, chromium, work, f"{page.tag}-{kind}", path, mode))
                   for page, kind, path, mode in jobs]
        for page, kind, future in futures:
            setattr(page, kind, future.result())
    for page in pages.values():
        page.dom = parse_dom(page.dump["stdout"])
        m = re.search(r'<pre id="punctual-measure">(.*?)</pre>', page.measure["stdout"], re.S)
        check(m, f"{page.tag}: the measuring script left no result: "
                 f"{console_problems(page.measure['stderr'])[:3]}")
        page.layout = json.loads(html.unescape(m.group(1)))


def check_canary(chromium, work):
    """With this chromium, a page's request (even to 127.0.0.1) shows in the network log as the
    page's, and a script error shows in the log: the two detectors below can see a failure."""
    port = harness.closed_port()
    probe = os.path.join(work, "probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html><html><body><p>probe</p>"
                f"<img src=\"http://127.0.0.1:{port}/probe.png\">"
                "<script>punctual_probe_undefined();</script></body></html>")
    r = chromium_run(chromium, work, "probe", probe, "dump-dom")
    requests, own = page_requests(load_netlog(r["netlog"]))
    check(any(f"127.0.0.1:{port}/probe.png" in url for url, _ in requests),
          f"the probe's image request is not in the network log as the page's: {requests}")
    problems = console_problems(r["stderr"])
    check(any("Uncaught" in line for line in problems),
          f"the probe's script error is not in chromium's log: {r['stderr'][-800:]!r}")
    print(f"     probe: image request seen ({len(requests)} page request(s), {own} of chromium's "
          f"own ignored), script error seen", flush=True)


def check_console(page):
    problems = []
    for kind in ("shot", "dump"):
        problems += [f"{kind}: {line}" for line in console_problems(getattr(page, kind)["stderr"])]
    check(not problems, "console output from the page:\n  " + "\n  ".join(problems[:10]))


def check_netlog(page):
    total_own = 0
    for kind in ("shot", "dump"):
        requests, own = page_requests(load_netlog(getattr(page, kind)["netlog"]))
        total_own += own
        check(not requests, f"{kind}: the page made requests: {requests[:10]}")
    print(f"     {page.tag}: no request from the page ({total_own} of chromium's own background "
          "requests ignored)", flush=True)


def check_layout(page):
    gaps = []
    problems = layout_problems(page.layout, gaps)
    texts = sum(len(c["texts"]) for c in page.layout["charts"])
    print(f"     {page.tag}: {len(page.layout['charts'])} charts, {texts} labels measured; narrowest "
          f"legend gap {min(gaps, default=float('nan')):.1f} px; page {page.layout['scrollWidth']} px "
          f"wide in {page.layout['clientWidth']} px", flush=True)
    check(not problems, "\n  " + "\n  ".join(problems))


def check_run_dom(page):
    dom = page.dom
    for chart_id, wanted in RUN_CHARTS.items():
        svg = chart(dom, chart_id)
        paths = series_paths(svg)
        for name in wanted:
            check(name in paths, f"#{chart_id}: no series {name!r} (has {sorted(paths)})")
            check(len(path_points(paths[name])) >= 2, f"#{chart_id}: series {name!r} has < 2 points")
        check("no data" not in [t.text() for t in svg.find_all("text")], f"#{chart_id} says 'no data'")
    spectrum = series_paths(chart(dom, "spectrum"))
    for name in RUN_CHARTS["spectrum"]:
        n = int(spectrum[name].attrs.get("data-points", "0"))
        check(n >= 10, f"spectrum: {name!r} has only {n} points")


def check_worst_second(page):
    report, dom = page.report, page.dom
    w = report.get("worst_interval")
    check(isinstance(w, dict), f"worst_interval is {w!r}, expected an object (the run had a stall)")
    check(w["response_time"]["p99_ns"] >= 200e6,
          f"worst second's p99 {w['response_time']['p99_ns'] / 1e6:.1f} ms: the 400 ms stall is not in it")
    # the block
    h3 = [n for n in dom.find_all("h3") if n.text().strip() == "The worst second"]
    check(len(h3) == 1, f"{len(h3)} 'The worst second' headings")
    block = h3[0].parent
    cells = {}
    for tr in block.find_all("tr"):
        th, td = tr.find_all("th"), tr.find_all("td")
        if th and td:
            cells[th[0].text().strip()] = td[0].text().strip()
    check(cells.get("second", "").startswith(f"{w['second']} "),
          f"worst-second block: second {cells.get('second')!r}, JSON {w['second']}")
    check(w["cause"] in cells.get("cause", ""),
          f"worst-second block: cause {cells.get('cause')!r}, JSON {w['cause']!r}")
    # the band, where the JSON says
    svg = chart(dom, "latency-over-time")
    bands = [r for r in svg.find_all("rect") if "band" in r.attrs.get("class", "").split()]
    check(len(bands) == 1, f"{len(bands)} bands in #latency-over-time (expected the worst second)")
    to_x, _, _, _ = axis_maps(svg)
    x0 = float(bands[0].attrs["x"])
    x1 = x0 + float(bands[0].attrs["width"])
    sched = report["schedule"]
    want0 = (w["intended_start_mono_ns"] - sched["start_mono_ns"] - sched["warmup_ns"]) / 1e9
    want1 = want0 + (w["intended_end_mono_ns"] - w["intended_start_mono_ns"]) / 1e9
    got0, got1 = to_x(x0), to_x(x1)
    print(f"     band at {got0:.3f}..{got1:.3f} s, worst_interval {want0:.3f}..{want1:.3f} s "
          f"(second {w['second']}, p99 {w['response_time']['p99_ns'] / 1e6:.0f} ms, cause {w['cause']})",
          flush=True)
    check(abs(got0 - want0) < 0.02 and abs(got1 - want1) < 0.02,
          f"band {got0:.3f}..{got1:.3f} s, worst_interval {want0:.3f}..{want1:.3f} s")


def check_peak(page):
    report, dom = page.report, page.dom
    rows = (report.get("series") or {}).get("per_second")
    check(isinstance(rows, list) and len(rows) >= 4, f"series.per_second: {rows!r:.200}")
    p99 = [r["response_time"]["p99_ns"] for r in rows]
    worst = max(range(len(rows)), key=lambda i: p99[i])
    svg = chart(dom, "latency-over-time")
    path = series_paths(svg)["response p99"]
    points = path_points(path)
    check_eq(len(points), len(rows), "points of 'response p99' (no decimation below 600 rows)")
    check_eq(int(path.attrs.get("data-points", "-1")), len(rows), "data-points of 'response p99'")
    peak = min(range(len(points)), key=lambda i: points[i][1])  # SVG y grows downwards
    to_x, to_y, (x_end, y_end), _ = axis_maps(svg)
    at_s, value = to_x(points[peak][0]), to_y(points[peak][1])
    # Each row covers [offset_s, offset_s + interval) and is drawn at its middle.
    half = report["series"]["interval_ns"] / 2e9
    middle = [r["offset_s"] + half for r in rows]
    nearest = min(range(len(rows)), key=lambda i: abs(middle[i] - at_s))
    print(f"     p99 per row (ms): {[round(v / 1e6, 1) for v in p99]}; chart peak at {at_s:.3f} s, "
          f"{value / 1e6:.1f} ms; JSON max at row {worst} (offset {rows[worst]['offset_s']} s)", flush=True)
    check_eq(peak, worst, "index of the chart's p99 peak vs the row of the largest p99_ns")
    check_eq(nearest, worst, "row at the chart's peak x")
    check(abs(at_s - middle[worst]) < 0.02,
          f"peak at {at_s:.3f} s, row's middle at {middle[worst]} s")
    # The stall log says when the held responses went out: their completions, and so the
    # sawtooth's peak, belong to the row holding the stall's end.
    with open(os.path.join(os.path.dirname(page.json), "stall.jsonl")) as f:
        stalls = [json.loads(line) for line in f if line.strip()]
    check_eq(len(stalls), 1, "stalls in the server's log")
    measure_start = report["schedule"]["start_mono_ns"] + report["schedule"]["warmup_ns"]
    interval = report["series"]["interval_ns"]
    since = stalls[0]["end_mono_ns"] - measure_start
    rows_ok = {since // interval} | ({since // interval - 1} if since % interval < 20_000_000 else set())
    print(f"     stall ended {since / 1e9:.3f} s into the window: peak expected in row {sorted(rows_ok)}",
          flush=True)
    check(nearest in rows_ok, f"peak in row {nearest}, the stall log implies {sorted(rows_ok)}")
    check(abs(value - p99[worst]) <= 0.01 * y_end + 1e-9,
          f"peak drawn at {value / 1e6:.2f} ms, JSON {p99[worst] / 1e6:.2f} ms (axis to {y_end / 1e6:g} ms)")
    # every other point too: the line is the JSON's column
    for i, (x, y) in enumerate(points):
        check(abs(to_x(x) - middle[i]) < 0.02,
              f"point {i} at {to_x(x):.3f} s, row's middle at {middle[i]}")
        check(abs(to_y(y) - p99[i]) <= 0.01 * y_end,
              f"point {i} at {to_y(y) / 1e6:.2f} ms, row {p99[i] / 1e6:.2f} ms")


def read_hgrm(path):
    """[(value_ms, percentile_fraction)] of an .hgrm's rows, in order."""
    rows = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 3 and not line.startswith("#") and parse_number(fields[0]) is not None:
                rows.append((float(fields[0]), float(fields[1])))
    return rows


def check_spectrum(page):
    """The spectrum's response-time line is the histogram's percentile iteration, as the .hgrm
    of the same run prints it: as many points, each at its percentile on the 1/(1-p) axis (the
    grid lines 0%, 90%, 99%, ... are 0, 1, 2, ... on it) and at its value."""
    svg = chart(page.dom, "spectrum")
    points = path_points(series_paths(svg)["response time"])
    hgrm = read_hgrm(os.path.join(os.path.dirname(page.json), "run.hgrm"))
    check_eq(len(points), len(hgrm), "spectrum points vs .hgrm rows")
    grid = [g for g in svg.find_all("g") if g.attrs.get("stroke") == "#e3e3e3"][0]
    vertical = [float(ln.attrs["x1"]) for ln in grid.children
                if ln.tag == "line" and ln.attrs["x1"] == ln.attrs["x2"] and ln.attrs["y1"] != ln.attrs["y2"]]
    check(len(vertical) >= 2, f"spectrum: {len(vertical)} vertical grid lines")
    nines = lambda px: (px - vertical[0]) * (len(vertical) - 1) / (vertical[-1] - vertical[0])  # noqa: E731
    _, to_y, (_, y_end), _ = axis_maps(svg)
    for (x, y), (value_ms, p) in zip(points, hgrm):
        want = len(vertical) - 1 if p >= 1 else min(len(vertical) - 1, math.log10(1 / (1 - p)))
        check(abs(nines(x) - want) < 0.02, f"point at {nines(x):.3f} nines, .hgrm percentile {p} ({want:.3f})")
        check(abs(to_y(y) - value_ms * 1e6) <= 0.01 * y_end + 1e-3 * value_ms * 1e6,
              f"point at {to_y(y) / 1e6:.3f} ms, .hgrm {value_ms} ms")
    print(f"     spectrum: {len(points)} points, each on its .hgrm row", flush=True)


def check_load(page):
    """The load chart tells the schedule: 500 planned in every row (constant arrivals at -R500),
    and no empty row after the measured window (it would draw every line down to 0 at the end,
    a drop in load that never happened). A row after the window holds the drain's completions,
    if any: it plans nothing and records something."""
    report = page.report
    rows = report["series"]["per_second"]
    window_s = report["schedule"]["window_ns"] / 1e9
    outside = [(r["second"], r["offset_s"], r["planned"], r["response_time"]["count"]) for r in rows
               if r["offset_s"] >= window_s - 1e-9 and (r["planned"] or not r["response_time"]["count"])]
    check(not outside, f"series.per_second has empty or planning rows at or after the {window_s:g} s "
                       f"window's end (second, offset_s, planned, samples): {outside}")
    drawn_rows = len(rows)
    rows = [r for r in rows if r["offset_s"] < window_s - 1e-9]
    svg = chart(page.dom, "load-over-time")
    to_x, to_y, _, _ = axis_maps(svg)
    planned = [(round(to_x(x), 3), round(to_y(y), 1)) for x, y in path_points(series_paths(svg)["planned"])]
    print(f"     planned per row as drawn (s, requests): {planned}", flush=True)
    check_eq(len(planned), drawn_rows, "points of 'planned'")
    for (at, value), row in zip(planned, rows):
        check_eq(row["planned"], 500, f"JSON planned in row {row['second']}")
        check(abs(value - 500) <= 0.01 * 600 + 1, f"planned drawn at {value} for row at {at} s")


def check_generator(page):
    """The Generator section: a row per worker, its figures the JSON's generator.workers."""
    workers = page.report["generator"]["workers"]
    h2 = page.dom.find_all("h2", id="generator")
    check(len(h2) == 1, f"{len(h2)} generator headings")
    siblings = h2[0].parent.children
    after = siblings[siblings.index(h2[0]) + 1:]
    table = next((n for n in after if n.tag == "table"), None)
    check(table is not None, "no table after the generator heading")
    rows = [[td.text().strip() for td in tr.find_all("td")] for tr in table.find_all("tr")]
    rows = [r for r in rows if r]
    check_eq(len(rows), len(workers), "generator rows (one per worker)")
    for k, (row, w) in enumerate(zip(rows, workers)):
        shown = [int(cell.replace(",", "")) for cell in row[1:5]]
        want = [w["planned"], w["sent_for_others"], w["claimed_away"], w["outcomes"]]
        check_eq(shown, want, f"worker {k}: planned, sent for others, claimed away, outcomes")


def check_demo_dom(page):
    svg = chart(page.dom, "spectrum")
    paths = series_paths(svg)
    check_eq(sorted(paths), sorted(DEMO_SERIES), "the demo spectrum's series")
    for name in DEMO_SERIES:
        n = int(paths[name].attrs.get("data-points", "0"))
        check(n >= 10, f"demo spectrum: {name!r} has only {n} points")
    legend = [t.text() for t in svg.children if t.tag == "text"]
    for name in DEMO_SERIES:
        check(name in legend, f"demo spectrum: no legend entry {name!r} (texts {legend})")


def main():
    binary = harness.binary_from_argv()
    checks = harness.Checks("html_browser")
    chromium = find_chromium()
    if chromium is None:
        checks.run("chromium present", check, False, "needs chromium (Debian package chromium)")
        checks.finish()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="punctual-html-browser-") as work:
        pages = {}
        demo = start_demo(binary, work)
        checks.run("run against serve (400 ms stall) writes run.json and run.html", make_run_page,
                   binary, work, pages)
        checks.run("chromium: a page's request and a script error are detected (probe page)",
                   check_canary, chromium, work)
        rendered = []
        if "run" in pages:
            checks.run("chromium renders run.html (screenshot, DOM, layout)",
                       lambda: (render(chromium, work, {"run": pages["run"]}), rendered.append("run")))
        if "run" in pages:
            checks.run("punctual compare run.json run.json writes compare.html", make_compare_page,
                       binary, work, pages)
        if "compare" in pages:
            checks.run("chromium renders compare.html (screenshot, DOM, layout)",
                       lambda: (render(chromium, work, {"compare": pages["compare"]}),
                                rendered.append("compare")))
        checks.run("search against serve writes search.json and search.html",
                   make_search_page, binary, work, pages)
        if "search" in pages:
            checks.run("chromium renders search.html (screenshot, DOM, layout)",
                       lambda: (render(chromium, work, {"search": pages["search"]}),
                                rendered.append("search")))
        checks.run("punctual demo writes demo.json and demo.html", make_demo_page, demo, pages)
        if "demo" in pages:
            checks.run("chromium renders demo.html (screenshot, DOM, layout)",
                       lambda: (render(chromium, work, {"demo": pages["demo"]}), rendered.append("demo")))
        if not pages:
            checks.finish()
        for page in pages.values():
            name = os.path.basename(page.html)
            checks.run(f"{name}: no external reference in the source", check_self_contained_source, page.html)
            if page.tag not in rendered:
                continue
            checks.run(f"{name}: no external reference in the DOM", check_self_contained_dom, page.dom)
            checks.run(f"{name}: no request left the file (network log)", check_netlog, page)
            checks.run(f"{name}: no console error or uncaught exception", check_console, page)
            checks.run(f"{name}: screenshot {WINDOW} is not blank", check_not_blank, page.shot["png"],
                       ("#1f77b4", "#e07b00") if page.tag in ("demo", "compare") else ())
            checks.run(f"{name}: labels inside their charts, none overlapping", check_layout, page)
            if page.tag == "run":
                checks.run(f"{name}: charts {', '.join(RUN_CHARTS)} with their series", check_run_dom, page)
                checks.run(f"{name}: worst-second block and band where worst_interval says",
                           check_worst_second, page)
                checks.run(f"{name}: latency chart's p99 peaks at the row of the largest p99_ns",
                           check_peak, page)
                checks.run(f"{name}: load chart: 500 planned in every row, none past the window",
                           check_load, page)
                checks.run(f"{name}: spectrum points are the .hgrm's percentile iteration",
                           check_spectrum, page)
                checks.run(f"{name}: generator section: a row per worker, as the JSON says",
                           check_generator, page)
            elif page.tag == "compare":
                checks.run(f"{name}: charts {', '.join(COMPARE_CHARTS)} with their series, the verdict",
                           check_compare_dom, page)
            elif page.tag == "search":
                checks.run(f"{name}: knee charts {', '.join(SEARCH_CHARTS)} with a point per rate",
                           check_search_dom, page)
            else:
                checks.run(f"{name}: spectrum with the four views", check_demo_dom, page)
        print(f"     screenshots were in {work} (removed); wall time {time.monotonic() - started:.1f} s",
              flush=True)
    checks.finish()


if __name__ == "__main__":
    main()
