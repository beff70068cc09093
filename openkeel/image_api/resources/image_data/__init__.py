"""/v2/images/{image_id}/file: upload and download of image data."""
