"""API-tier use cases, one module per resource, free of the web framework."""
