"""Server use cases of the compute API: create, list, show, update, delete and power actions.

One module per concern; called by ``openkeel.api.resources.servers`` handlers only.
"""
