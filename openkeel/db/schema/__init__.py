"""SQLAlchemy Core table definitions for the API (``api``) and cell (``cell``) databases."""
