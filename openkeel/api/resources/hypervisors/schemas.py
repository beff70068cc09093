"""Query schemas of ``/os-hypervisors``, each a delta of the version before it."""

from __future__ import annotations

from openkeel.api.validation import Versioned, loose_query, multi, single, strict_query

_NON_NEGATIVE = {"type": ["integer", "string"], "pattern": "^[0-9]*$", "minimum": 0, "minLength": 1}
_FQDN = {"type": "string", "pattern": "^[a-zA-Z0-9-._]*$", "minLength": 1, "maxLength": 255}
_BOOLEAN = {
    "type": ["boolean", "string"],
    "enum": [
        *(True, "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes"),
        *(False, "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no"),
    ],
}

index_query = loose_query()
# 2.33: paging.
index_query_v233 = loose_query({"limit": multi(_NON_NEGATIVE), "marker": multi({"type": "string"})})
# 2.53: hostname pattern and hosted servers as parameters; unknown parameters rejected.
index_query_v253 = strict_query(
    {
        "limit": single(_NON_NEGATIVE),
        "marker": single({"type": "string"}),
        "hypervisor_hostname_pattern": single(_FQDN),
        "with_servers": single(_BOOLEAN),
    }
)
show_query = loose_query()
# 2.53: hosted servers on request; unknown parameters rejected.
show_query_v253 = strict_query({"with_servers": single(_BOOLEAN)})
# statistics, search, servers and uptime accept anything (deprecated APIs).
any_query = loose_query()

INDEX_QUERY = Versioned.of(
    ("2.1", index_query), ("2.33", index_query_v233), ("2.53", index_query_v253)
)
SHOW_QUERY = Versioned.of(("2.1", show_query), ("2.53", show_query_v253))
ANY_QUERY = Versioned.of(("2.1", any_query))
