"""The flavors resource: flavors, their extra specs and their project access lists."""
