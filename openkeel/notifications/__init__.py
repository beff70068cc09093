"""Notifications as Nova emits them: versioned payloads (ovo-style ``nova_object.*``
envelopes, pure builders in ``versioned`` and ``instance_payloads``), Nova's legacy
unversioned payloads (``legacy``), and the ``Notifier`` (``emitter``) that the composition roots
build from ``[notifications]`` / ``[oslo_messaging_notifications]`` and pass to the roles.
Decision 0060.
"""
