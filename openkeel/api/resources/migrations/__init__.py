"""GET /os-migrations: migration records of every cell (Nova's migrations controller)."""
