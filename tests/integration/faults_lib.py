"""Helpers for test_faults.py: the server's arrival log and binomial tolerances."""

import math


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


def binomial_tolerance(n, p, sigmas=4.0):
    """Half-width of an interval that holds a Binomial(n, p) draw but for ~1 in 15000 cases."""
    return sigmas * math.sqrt(max(n * p * (1.0 - p), 1.0)) + 2


def within_binomial(count, n, p):
    return abs(count - n * p) <= binomial_tolerance(n, p)


def nonzero(d):
    return {k: v for k, v in d.items() if v}
