"""/v2/images and /v2/images/{image_id}: list, create, show, update (JSON patch), delete."""
