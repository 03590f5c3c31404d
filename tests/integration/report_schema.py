"""The JSON report's contract: docs/report.schema.json, plus the sums a schema cannot express.

    import report_schema
    report_schema.validate(report)   # raises AssertionError naming the failing field

Needs only the standard library and jsonschema (Debian's python3-jsonschema, installed by
scripts/install-deps.sh); the schema is loaded and checked once, on first use.
"""

import hashlib
import json
import os

try:
    import jsonschema
except ImportError as exc:  # pragma: no cover - depends on the machine
    raise ImportError("report_schema needs jsonschema: apt-get install python3-jsonschema "
                      "(scripts/install-deps.sh lists it)") from exc

SCHEMA_PATH = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "..", "..", "docs", "report.schema.json"))

# How many schema errors one failure message lists (the most relevant first).
_MAX_ERRORS = 3
_MAX_MESSAGE = 300

_validator = None


def schema():
    """The parsed schema (loaded once)."""
    return _get_validator().schema


def _get_validator():
    global _validator
    if _validator is None:
        with open(SCHEMA_PATH, encoding="utf-8") as f:
            loaded = json.load(f)
        jsonschema.Draft202012Validator.check_schema(loaded)
        _validator = jsonschema.Draft202012Validator(loaded)
    return _validator


def field_path(path):
    """A JSON path in the report's terms: outcomes.skipped, validity.checks[3].level."""
    text = "report"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _describe(error):
    if error.validator in ("oneOf", "anyOf"):
        # The default message repeats the whole value; the alternatives are in the schema.
        message = f"matches none of the allowed forms ({error.validator} in the schema)"
    else:
        message = error.message
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + "..."
    return f"{field_path(error.absolute_path)}: {message}"


def _schema_errors(report):
    errors = list(_get_validator().iter_errors(report))
    if not errors:
        return []
    best = jsonschema.exceptions.best_match(errors)
    rest = sorted((e for e in errors if e is not best), key=jsonschema.exceptions.relevance, reverse=True)
    return [best] + rest


def _check_sums(report):
    """The rules the schema cannot state; called only on a report the schema accepted."""
    problems = []
    outcomes = report["outcomes"]
    socket_sum = sum(report["socket_errors"].values())
    if socket_sum != outcomes["socket_error"]:
        problems.append(f"report.socket_errors: the reasons add up to {socket_sum}, but "
                        f"outcomes.socket_error is {outcomes['socket_error']} ({report['socket_errors']})")
    http_errors = report.get("http_errors")
    if http_errors is not None and sum(http_errors.values()) != outcomes["http_error"]:
        problems.append(f"report.http_errors: the reasons add up to {sum(http_errors.values())}, but "
                        f"outcomes.http_error is {outcomes['http_error']} ({http_errors})")
    for name, session in (report.get("sessions") or {}).items():
        o = session["outcomes"]
        ended_badly = session["planned"] - o["ok"] - o["skipped"] - o["dropped"] - o["unfinished"]
        if sum(session["failed_at"].values()) != ended_badly:
            problems.append(f"report.sessions.{name}.failed_at: adds up to {sum(session['failed_at'].values())}, "
                            f"but {ended_badly} sessions ended neither ok, skipped, dropped nor unfinished")
    planned = report["schedule"]["planned"]
    outcome_sum = sum(outcomes.values())
    if planned != outcome_sum:
        problems.append(f"report.schedule.planned: {planned}, but the outcomes add up to "
                        f"{outcome_sum} ({outcomes})")
    for k, w in enumerate(report["generator"]["workers"]):
        if w["planned"] + w["sent_for_others"] - w["claimed_away"] != w["outcomes"]:
            problems.append(f"report.generator.workers[{k}]: planned {w['planned']} + sent_for_others "
                            f"{w['sent_for_others']} - claimed_away {w['claimed_away']} is not its "
                            f"outcomes {w['outcomes']}")
    generator, workers = report["generator"], report["generator"]["workers"]
    for total, of in (("sent_for_others", sum), ("claimed_away", sum), ("longest_wake_lateness_ns", max)):
        if total in generator and all(total in w for w in workers) and workers:
            want = of(w[total] for w in workers)
            if generator[total] != want:
                problems.append(f"report.generator.{total}: {generator[total]}, but the workers' "
                                f"give {want}")
    problems += _thread_problems(report)
    warmup = report.get("warmup")
    if warmup is not None:
        warmup_sum = sum(warmup["outcomes"].values())
        if warmup["planned"] != warmup_sum:
            problems.append(f"report.warmup.planned: {warmup['planned']}, but the warm-up outcomes "
                            f"add up to {warmup_sum} ({warmup['outcomes']})")
    digest = _workload_digest(report["workload"]["fields"])
    if digest != report["workload"]["digest"]:
        problems.append(f"report.workload.digest: {report['workload']['digest']}, but the fields "
                        f"encode to {digest}")
    return problems


def _thread_problems(report):
    """generator.threads is the number of workers and model.threads; only --pin pins a worker (a
    merged report's pinned is false unless every shard was pinned, so its workers may be)."""
    generator, workers = report["generator"], report["generator"]["workers"]
    problems = []
    if "threads" in generator and not generator["threads"] == len(workers) == report["model"]["threads"]:
        problems.append(f"report.generator.threads: {generator['threads']}, but {len(workers)} workers "
                        f"and model.threads {report['model']['threads']}")
    pinned = [k for k, w in enumerate(workers) if "pinned_cpu" in w]
    if generator.get("pinned") is False and pinned and "shards" not in report:
        problems.append(f"report.generator.pinned: false, but workers {pinned} have a pinned_cpu")
    return problems


def _workload_digest(fields):
    """The SHA-256 the schema describes: each name and value as LENGTH:BYTES, in order."""
    encoded = b"".join(b"%d:%s" % (len(text.encode()), text.encode())
                       for name, value in fields.items() for text in (name, value))
    return hashlib.sha256(encoded).hexdigest()


def validate(report):
    """Raises AssertionError unless REPORT (a parsed JSON report) keeps the contract."""
    errors = _schema_errors(report)
    if errors:
        lines = [_describe(e) for e in errors[:_MAX_ERRORS]]
        more = f" (and {len(errors) - _MAX_ERRORS} more)" if len(errors) > _MAX_ERRORS else ""
        raise AssertionError("JSON report does not match docs/report.schema.json" + more + ":\n  "
                             + "\n  ".join(lines))
    problems = _check_sums(report)
    if problems:
        raise AssertionError("JSON report breaks the accounting:\n  " + "\n  ".join(problems))
