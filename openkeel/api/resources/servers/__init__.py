"""The servers resource: ``/servers`` create, list, show, update, delete and the lifecycle
actions (start, stop, reboot, forceDelete, restore)."""
