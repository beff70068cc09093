"""Totals and failures grouped by cause from a subunit v2 stream (``stestr last --subunit``).

Used by scripts/tempest.sh: a failure's cause is the last line of its traceback (the exception
and its message, numbers and uuids blanked so that alike failures group together).
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict

import subunit
import testtools

_VOLATILE = re.compile(r"[0-9a-f]{8}-[0-9a-f-]{27}|\b\d+(\.\d+)?\b")


class _Collect(testtools.StreamResult):
    def __init__(self) -> None:
        super().__init__()
        self.outcomes: dict[str, str] = {}
        self.details: dict[str, list[bytes]] = defaultdict(list)

    def status(self, test_id=None, test_status=None, file_name=None, file_bytes=None, **_):  # type: ignore[no-untyped-def,override]
        if test_id is None:
            return
        if file_bytes and file_name == "traceback":
            self.details[test_id].append(bytes(file_bytes))
        if test_status in ("success", "fail", "skip", "xfail", "uxsuccess"):
            self.outcomes[test_id] = test_status


def main() -> int:
    collect = _Collect()
    subunit.ByteStreamToStreamResult(sys.stdin.buffer, non_subunit_name="stdout").run(collect)
    counts = Counter(collect.outcomes.values())
    print(
        f"passed {counts['success']}, failed {counts['fail']}, skipped {counts['skip']} "
        f"(of {len(collect.outcomes)})"
    )
    causes: dict[str, list[str]] = defaultdict(list)
    for test_id, outcome in collect.outcomes.items():
        if outcome != "fail":
            continue
        text = b"".join(collect.details[test_id]).decode(errors="replace").strip()
        last = text.splitlines()[-1] if text else "(no traceback)"
        causes[_VOLATILE.sub("N", last)[:160]].append(test_id.split("[")[0])
    for cause, tests in sorted(causes.items(), key=lambda item: -len(item[1])):
        print(f"\n{len(tests)} x {cause}")
        for name in sorted(tests)[:8]:
            print(f"    {name}")
        if len(tests) > 8:
            print(f"    ... and {len(tests) - 8} more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
