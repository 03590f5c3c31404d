"""The JSON report's contract (docs/report.schema.json) without load: the schema is valid
draft 2020-12 and documents every field, the sample reports under tests/data/reports pass it,
and each of a list of broken reports is rejected, by the schema or by the sums it cannot state.

Usage: python3 test_schema.py PATH_TO_PUNCTUAL   (the binary is not run)
"""

import copy
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import report_schema  # noqa: E402
from harness import check  # noqa: E402

import jsonschema  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "data", "reports"))
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

# Every fixture README.md describes; each must exist and pass.
EXPECTED_FIXTURES = (
    "open-constant", "closed", "closed-expected-interval", "closed-slo-refused", "open-retries",
    "open-socket-errors", "interrupted", "warmup", "slo", "tls", "trace", "pinned",
)


def load_fixture(name):
    with open(os.path.join(FIXTURES, name + ".json"), encoding="utf-8") as f:
        return json.load(f)


# ---------------------------------------------------------------------------
# the schema itself

def schema_is_valid_draft_2020_12():
    with open(report_schema.SCHEMA_PATH, encoding="utf-8") as f:
        schema = json.load(f)
    harness.check_eq(schema.get("$schema"), DRAFT_2020_12, "$schema")
    check(schema.get("$id"), "the schema has no $id")
    check(schema.get("title"), "the schema has no title")
    jsonschema.Draft202012Validator.check_schema(schema)


def _properties(node, path):
    """Yields (path, subschema) for every property declared anywhere in NODE."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    yield f"{path}.{name}", sub
                    yield from _properties(sub, f"{path}.{name}")
            else:
                yield from _properties(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _properties(item, f"{path}[{i}]")


def every_property_is_described():
    schema = report_schema.schema()
    # Properties inside if/then/allOf conditions restate constraints; they need no description.
    missing = [p for p, sub in _properties(schema, "#")
               if not sub.get("description") and not _in_condition(p)]
    check(not missing, f"properties without a description: {missing}")


def _in_condition(path):
    return any(part in path for part in ("/if", "/then", "/allOf"))


# ---------------------------------------------------------------------------
# the fixtures

def _resolve(node, root):
    """NODE and every schema it brings in through $ref, allOf, oneOf or anyOf."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if not isinstance(n, dict):
            continue
        out.append(n)
        ref = n.get("$ref")
        if ref:
            check(ref.startswith("#/"), f"non-local $ref {ref!r}")
            target = root
            for part in ref[2:].split("/"):
                target = target[part]
            stack.append(target)
        for key in ("allOf", "oneOf", "anyOf"):
            stack.extend(n.get(key, []))
    return out


def _undescribed(instance, node, root, path, found):
    """Collects the paths of INSTANCE's fields that NODE's schema does not describe."""
    nodes = _resolve(node, root)
    if isinstance(instance, dict):
        for key, value in instance.items():
            subs = [n["properties"][key] for n in nodes if key in n.get("properties", {})]
            if not subs:
                subs = [n["additionalProperties"] for n in nodes
                        if isinstance(n.get("additionalProperties"), dict)]
            if not subs:
                found.append(f"{path}.{key}")
            for sub in subs:
                _undescribed(value, sub, root, f"{path}.{key}", found)
    elif isinstance(instance, list):
        for i, value in enumerate(instance):
            subs = []
            for n in nodes:
                prefix = n.get("prefixItems", [])
                if i < len(prefix):
                    subs.append(prefix[i])
                elif isinstance(n.get("items"), dict):
                    subs.append(n["items"])
            for sub in subs:
                _undescribed(value, sub, root, f"{path}[{i}]", found)


def fixture_passes(name):
    report = load_fixture(name)
    report_schema.validate(report)
    # Beyond passing: every field the writer emitted is one the schema describes, so a field
    # added to the writer shows up here once the fixtures are regenerated.
    found = []
    schema = report_schema.schema()
    _undescribed(report, schema, schema, "report", found)
    check(not found, f"fields the schema does not describe: {found}")


def fixtures_are_all_listed():
    present = sorted(os.path.splitext(os.path.basename(p))[0]
                     for p in glob.glob(os.path.join(FIXTURES, "*.json")))
    harness.check_eq(present, sorted(EXPECTED_FIXTURES), "fixtures in tests/data/reports")
    with open(os.path.join(FIXTURES, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    undocumented = [n for n in EXPECTED_FIXTURES if f"{n}.json" not in readme]
    check(not undocumented, f"fixtures README.md does not describe: {undocumented}")


# ---------------------------------------------------------------------------
# broken reports: each must be rejected

def drop_skipped(r):
    del r["outcomes"]["skipped"]


def unknown_socket_reason(r):
    r["socket_errors"]["no_such_reason"] = 0


def wrong_correction_kind(r):
    r["correction"]["kind"] = "coordinated"


def expected_interval_without_ns(r):
    del r["correction"]["expected_interval_ns"]


def percentile_key_missing(r):
    del r["latency"]["service_time"]["percentiles_ns"]["99.9"]


def percentile_key_extra(r):
    r["latency"]["send_lag"]["percentiles_ns"]["95"] = 0


def schema_version_1(r):
    r["schema_version"] = 1


def workload_missing(r):
    del r["workload"]


def workload_field_edited(r):
    r["workload"]["fields"]["expect_status"] = "200"


def run_id_with_a_space(r):
    r["run_id"] = "a run"


def negative_count(r):
    r["latency"]["queue_wait"]["count"] = -1


def socket_errors_do_not_sum(r):
    r["socket_errors"]["reset"] += 1


def outcomes_do_not_sum(r):
    r["schedule"]["planned"] += 1


def warmup_does_not_sum(r):
    r["warmup"]["outcomes"]["ok"] -= 1


def claims_do_not_sum(r):
    r["generator"]["workers"][0]["sent_for_others"] += 1


def threads_not_the_workers(r):
    r["generator"]["threads"] += 1


def pinned_cpu_without_pin(r):
    r["generator"]["pinned"] = False


def check_level_fatal(r):
    r["validity"]["checks"][0]["level"] = "fatal"


def interrupted_as_string(r):
    r["interrupted"] = "false"


def status_code_not_three_digits(r):
    r["status_counts"]["20"] = 1


def latency_view_missing(r):
    del r["latency"]["connect_time"]


def trace_section_missing(r):
    del r["model"]["trace"]


def trace_section_without_trace_arrival(r):
    r["model"]["arrival"] = "constant"


# (name, fixture, mutation, a fragment the error message must contain)
MUTATIONS = (
    ("drop outcomes.skipped", "open-constant", drop_skipped, "'skipped' is a required property"),
    ("unknown socket_errors key", "open-socket-errors", unknown_socket_reason, "no_such_reason"),
    ("wrong correction.kind", "open-constant", wrong_correction_kind, "report.correction.kind"),
    ("expected-interval without expected_interval_ns", "closed-expected-interval",
     expected_interval_without_ns, "'expected_interval_ns' is a required property"),
    ("percentiles_ns key missing", "open-constant", percentile_key_missing, "'99.9' is a required property"),
    ("percentiles_ns key extra", "open-constant", percentile_key_extra, "report.latency.send_lag.percentiles_ns"),
    ("schema_version 1", "open-constant", schema_version_1, "report.schema_version"),
    ("no workload (a version 1 report)", "open-constant", workload_missing,
     "'workload' is a required property"),
    ("a workload field edited, not its digest", "closed", workload_field_edited,
     "report.workload.digest"),
    ("run_id with a space", "open-constant", run_id_with_a_space, "report.run_id"),
    ("negative count", "open-constant", negative_count, "report.latency.queue_wait.count"),
    ("socket_errors not summing to socket_error", "open-socket-errors", socket_errors_do_not_sum,
     "outcomes.socket_error"),
    ("planned not the sum of outcomes", "open-constant", outcomes_do_not_sum, "report.schedule.planned"),
    ("warm-up planned not the sum of its outcomes", "warmup", warmup_does_not_sum, "report.warmup.planned"),
    ("a worker's claims not adding up to its outcomes", "open-constant", claims_do_not_sum,
     "report.generator.workers[0]"),
    ("generator.threads not the number of workers", "open-constant", threads_not_the_workers,
     "report.generator.threads"),
    ("a worker's pinned_cpu in a run without --pin", "pinned", pinned_cpu_without_pin,
     "report.generator.pinned"),
    ("check with level fatal", "open-constant", check_level_fatal, "report.validity.checks[0].level"),
    ("interrupted as a string", "interrupted", interrupted_as_string, "report.interrupted"),
    ("status code key not 3 digits", "open-constant", status_code_not_three_digits, "report.status_counts"),
    ("latency view missing", "closed", latency_view_missing, "'connect_time' is a required property"),
    ("trace replay without model.trace", "trace", trace_section_missing, "'trace' is a required property"),
    ("model.trace without arrival trace", "trace", trace_section_without_trace_arrival, "report.model"),
)


def mutation_rejected(fixture, mutate, fragment):
    report = load_fixture(fixture)
    report_schema.validate(report)  # the unbroken fixture passes
    broken = copy.deepcopy(report)
    mutate(broken)
    try:
        report_schema.validate(broken)
    except AssertionError as exc:
        check(fragment in str(exc), f"rejected, but the message does not mention {fragment!r}:\n{exc}")
        return
    raise AssertionError("the broken report was accepted")


def main():
    harness.binary_from_argv()  # the convention of every script here; nothing is run
    checks = harness.Checks("schema")
    checks.run("schema is valid draft 2020-12", schema_is_valid_draft_2020_12)
    checks.run("every schema property has a description", every_property_is_described)
    checks.run("fixtures are all listed", fixtures_are_all_listed)
    for name in EXPECTED_FIXTURES:
        checks.run(f"fixture {name} passes", fixture_passes, name)
    for name, fixture, mutate, fragment in MUTATIONS:
        checks.run(f"rejected: {name}", mutation_rejected, fixture, mutate, fragment)
    checks.finish()


if __name__ == "__main__":
    main()
