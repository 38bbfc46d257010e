#!/usr/bin/env python3
"""The yardstick of `cargo bench --bench ledger_fold`: a plain Python fold of an event directory.

What a straightforward script does with `.ralph/events/`: list the directory, read and parse
every visible `*.json` file (skipping the ones that do not parse), order the events by timestamp
(ties by file name), and fold the weight deltas into the weights, counting successes and
failures per bot. No cache, no statistics beyond that. The fold is kept deliberately cheap —
one normalise, clamp, normalise per event, as the prototype did, rather than an exact
projection — so the time is mostly reading and parsing, the part any implementation pays.

Usage: python3 ledger_fold.py EVENTS_DIR [BOT ...]
Prints one JSON line: {"events": N, "skipped": N, "weights": {...}, "efficiency": {...}}.
"""

import json
import os
import sys
from datetime import datetime

SUCCESS = {"success", "replan_success"}
FAILURE = {"failure", "replan_failure"}
WEIGHT_MIN, WEIGHT_MAX = 0.05, 0.6


def project(weights):
    """Normalise, clamp to the bounds, normalise again."""
    n = len(weights)
    lo, hi = min(WEIGHT_MIN, 1 / n), max(WEIGHT_MAX, 1 / n)
    total = sum(max(w, 0.0) for w in weights.values()) or 1.0
    for bot, w in weights.items():
        weights[bot] = min(max(max(w, 0.0) / total, lo), hi)
    total = sum(weights.values())
    for bot, w in weights.items():
        weights[bot] = w / total


def main():
    events_dir = sys.argv[1]
    bots = sys.argv[2:] or ["smart_bot_1", "smart_bot_2", "smart_bot_3"]
    events, skipped = [], 0
    for name in os.listdir(events_dir):
        if name.startswith(".") or not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(events_dir, name), "rb") as f:
                e = json.load(f)
            when = datetime.fromisoformat(e["timestamp"])
            events.append((when, name, e["bot_id"], e["outcome"], float(e["weight_delta"])))
        except (OSError, ValueError, KeyError, TypeError):
            skipped += 1
    events.sort()
    weights = {b: 1 / len(bots) for b in bots}
    wins = {b: 0 for b in bots}
    losses = {b: 0 for b in bots}
    for _, _, bot, outcome, delta in events:
        if bot not in weights:
            continue
        wins[bot] += outcome in SUCCESS
        losses[bot] += outcome in FAILURE
        weights[bot] += delta
        project(weights)
    efficiency = {
        b: wins[b] / (wins[b] + losses[b]) if wins[b] + losses[b] else 1.0 for b in bots
    }
    print(json.dumps({
        "events": len(events),
        "skipped": skipped,
        "weights": weights,
        "efficiency": efficiency,
    }))


if __name__ == "__main__":
    main()
