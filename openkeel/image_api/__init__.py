"""The image service role: a Glance v2 API subset over the embedded image catalog.

Served by the all-in-one (and ``openkeel api`` without ``[glance]``) under ``/image`` on the
compute API's port: :class:`openkeel.image_api.app.ImageApiApp` wraps the compute app. See
docs/decisions/0034 for what it serves and why it stops there.
"""
