"""The server tags resource (2.26+): /servers/{server_id}/tags and single tags."""
