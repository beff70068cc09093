"""``accessIPv4``/``accessIPv6`` of a server body in the form Nova stores and shows them.

Nova keeps access IPs as ``netaddr.IPAddress`` objects, so a server echoes the canonical text
of the address, not the text sent: ``0000:...:babe:220.12.22.2`` comes back
``::babe:dc0c:1602``. netaddr formats through the C library's ``inet_ntop`` (IPv4-mapped and
IPv4-compatible addresses keep their dotted tail, unlike ``ipaddress``), so this does too.
Used by the create and update request-to-command steps (the body schema already checked them).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any


def canonical(family: socket.AddressFamily, address: str) -> str:
    """``address`` (valid for ``family``) as netaddr, hence Nova, prints it."""
    return socket.inet_ntop(family, socket.inet_pton(family, address))


def access_ips(server: Mapping[str, Any]) -> dict[str, str]:
    """``access_ip_v4``/``access_ip_v6`` values for the access IPs present in ``server``."""
    found: dict[str, str] = {}
    if "accessIPv4" in server:
        found["access_ip_v4"] = canonical(socket.AF_INET, server["accessIPv4"])
    if "accessIPv6" in server:
        found["access_ip_v6"] = canonical(socket.AF_INET6, server["accessIPv6"])
    return found
