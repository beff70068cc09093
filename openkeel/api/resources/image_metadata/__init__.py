"""The /images/{image_id}/metadata proxy: image properties as metadata (2.1-2.38)."""
