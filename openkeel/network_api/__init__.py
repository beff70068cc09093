"""The embedded network service: a Neutron v2.0 subset served by the all-in-one under
``/networking`` (decision 0041)."""
