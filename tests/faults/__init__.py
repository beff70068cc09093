"""Fault-injection tests: kill -9 and service restarts under load, then the invariants."""
