"""/servers/{server_id}/os-server-password: show and clear the server's encrypted password."""
