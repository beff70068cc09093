"""GET /servers/{server_id}/diagnostics: what the hypervisor reports about a guest."""
