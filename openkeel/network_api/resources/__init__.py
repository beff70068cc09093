"""The network API's resources; each module's ``register`` adds its routes."""
