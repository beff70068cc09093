"""/servers/{server_id}/topology (2.78): the server's NUMA topology."""
