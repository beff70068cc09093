"""Pure domain layer: entities, state tables, errors. Imports nothing from the project."""
