"""``GET /os-console-auth-tokens/{id}``: the console a token opens (admin)."""
