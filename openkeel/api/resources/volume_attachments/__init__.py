"""``/servers/{server_id}/os-volume_attachments``: the volumes attached to a server."""
