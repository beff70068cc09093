"""Long compute operations, one module each: build, delete, power (stop/start/reboot).

Each is a function over a ``ComputeHost`` (openkeel.compute.host) called by the RPC endpoint,
the periodic tasks or start-up reconciliation. Every path ends in a stable state: success, or
ERROR with a fault, or (for an instance deleted meanwhile) a quiet cleanup.
"""
