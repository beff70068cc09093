"""The os-instance-actions resource: the actions recorded for a server and their events."""
