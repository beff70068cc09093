"""``/limits``: a project's absolute limits and usage (no rate limits)."""
