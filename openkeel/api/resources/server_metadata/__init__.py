"""The server metadata resource: /servers/{server_id}/metadata and its single keys."""
