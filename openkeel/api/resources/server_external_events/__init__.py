"""POST /os-server-external-events: events other services report about instances."""
