"""os-admin-password: the ``changePassword`` server action."""
