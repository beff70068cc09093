"""/v2/images/{image_id}/members: who a shared image is shared with."""
