"""Summarises a py-spy ``--format raw`` (collapsed stacks) profile of the API server.

    python -m benchmarks.hotspots profile.raw [--top 25] [--filter openkeel/]

Prints the functions with the most inclusive and self samples, so the hot spots of the request
path can be read without a flame graph viewer. Used by hand after run-foundation.sh PROFILE=1
(or ``py-spy record -f raw -p PID``) while the benchmark drives the server.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def _frame_key(frame: str) -> str:
    """``func (path/file.py:12)`` -> ``file.py:func`` with the path shortened after site-packages."""
    m = FRAME.match(frame)
    if not m:
        return frame
    path = m.group("file")
    for marker in ("site-packages/", "/work/main/", "lib/python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{path}:{m.group('func')}"


def load(path: str) -> list[tuple[list[str], int]]:
    stacks = []
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if stack and count.isdigit():
                stacks.append(([_frame_key(fr) for fr in stack.split(";")], int(count)))
    return stacks


def summarise(
    stacks: list[tuple[list[str], int]], needle: str
) -> tuple[Counter[str], Counter[str], int]:
    inclusive: Counter[str] = Counter()
    self_time: Counter[str] = Counter()
    total = 0
    for frames, count in stacks:
        total += count
        for key in set(frames):
            if needle in key:
                inclusive[key] += count
        self_time[frames[-1]] += count
    return inclusive, self_time, total


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("raw")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--filter", default="", help="only frames whose key contains this (inclusive)")
    args = p.parse_args()
    inclusive, self_time, total = summarise(load(args.raw), args.filter)
    print(f"{total} samples\n\ninclusive (frames containing {args.filter!r}):")
    for key, n in inclusive.most_common(args.top):
        print(f"  {100 * n / total:5.1f}%  {key}")
    print("\nself:")
    for key, n in self_time.most_common(args.top):
        print(f"  {100 * n / total:5.1f}%  {key}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
