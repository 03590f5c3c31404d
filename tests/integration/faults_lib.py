"""Helpers for the tests against punctual serve: its arrival log, and a report section's
non-zero counts."""


def read_arrival_log(path):
    """[(arrival_mono_ns, answered_mono_ns)] from `punctual serve --arrival-log`."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            arrival, answered = line.split()
            entries.append((int(arrival), int(answered)))
    return entries


def nonzero(d):
    return {k: v for k, v in d.items() if v}
