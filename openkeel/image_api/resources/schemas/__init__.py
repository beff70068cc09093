"""/v2/schemas/*: the JSON schemas of images and members."""
