"""The /images proxy: list, show and delete images of the image service (2.1-2.35)."""
