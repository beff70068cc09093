"""/v2/images/{image_id}/tags/{tag}: add and remove one tag."""
