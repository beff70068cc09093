"""The compute REST API role (/v2.1): app factory, routing, microversions, faults, policy."""
