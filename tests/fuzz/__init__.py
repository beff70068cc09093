"""Schema-derived fuzz test of the compute API (issue 7): every route, sampled microversions."""
