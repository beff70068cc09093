"""/v2/images/{image_id}/actions/{deactivate,reactivate}: hide an image's data and bring it back."""
