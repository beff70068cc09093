"""The image API's logic per resource, free of HTTP: Glance's rules over the repository."""
