"""Nova's server_migrations controller: in-progress live migrations of one server (2.23+),
abort (2.24+) and force_complete (2.22+)."""
