"""Nova's migrate_server controller (the ``migrate`` server action) and the handlers of the
resize family of server actions (resize, confirmResize, revertResize)."""
