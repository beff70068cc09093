"""``/os-services``: list, enable/disable/force down and delete compute services."""
