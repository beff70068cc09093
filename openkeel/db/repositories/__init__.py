"""Repositories: SQL over the API and cell database tables, one module per aggregate."""
