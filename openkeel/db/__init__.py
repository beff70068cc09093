"""Database layer: engines, table definitions, migrations, soft delete and cells v2 mappings."""
