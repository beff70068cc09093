"""The Origin check of the console proxies, case by case as Nova's."""

from __future__ import annotations

import pytest

from openkeel.console_proxy.origin import origin_refusal

NOVNC = "http://proxy.example.com:6080/vnc_lite.html"
SERIAL = "ws://proxy.example.com:6083/"
TLS = "https://proxy.example.com:6080/vnc_lite.html"


@pytest.mark.parametrize(
    ("headers", "allowed", "base", "refusal"),
    [
        ({"host": "proxy.example.com:6080"}, [], NOVNC, None),  # no Origin: not a browser
        ({"host": "proxy.example.com:6080", "origin": "http://proxy.example.com:6080"}, [],
         NOVNC, None),
        ({"host": "proxy.example.com:6083", "origin": "http://proxy.example.com"}, [],
         SERIAL, None),  # a ws:// URL takes an http page
        ({"host": "proxy.example.com:6083", "origin": "ws://proxy.example.com"}, [],
         SERIAL, None),
        ({"host": "proxy.example.com", "origin": "http://portal.example.com"},
         ["portal.example.com"], NOVNC, None),
        ({"host": "[::1]:6080", "origin": "http://[::1]:6080"}, [], NOVNC, None),
        ({"host": "proxy.example.com", "origin": "http://proxy.example.com",
          "x-forwarded-proto": "https"}, [], TLS, None),
        ({"host": "proxy.example.com", "origin": "http://evil.example.com"}, [], NOVNC,
         "Origin header does not match this host."),
        ({"host": "proxy.example.com", "origin": "https://proxy.example.com"}, [], NOVNC,
         "Origin header protocol does not match this host."),
        ({"host": "proxy.example.com", "origin": "http://proxy.example.com"}, [], TLS,
         "Origin header protocol does not match this host."),
        ({"host": "proxy.example.com", "origin": "null"}, [], NOVNC,
         "Origin header not valid."),
    ],
)  # fmt: skip
def test_origin(
    headers: dict[str, str], allowed: list[str], base: str, refusal: str | None
) -> None:
    assert origin_refusal(headers, allowed, base) == refusal
