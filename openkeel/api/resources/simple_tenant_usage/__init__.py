"""os-simple-tenant-usage: usage per project over a period (Nova's simple tenant usage)."""
