"""Composition roots: one entry point per role, plus manage and all-in-one."""
