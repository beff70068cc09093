"""The server IPs resource: /servers/{server_id}/ips and /ips/{network_label}."""
