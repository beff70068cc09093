"""The conductor role: schedules and builds servers (Nova's ComputeTaskManager).

``ConductorService`` (service.py) serves ``ComputeTaskEndpoint`` (endpoint.py) on topic
``conductor``, namespace ``compute_task``; the work itself is in ``tasks/``.
"""
