"""The image API's resources: one package per resource with routes, handlers and views."""
