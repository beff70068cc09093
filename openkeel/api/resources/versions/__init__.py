"""``GET /versions/{id}`` inside the versioned router."""
