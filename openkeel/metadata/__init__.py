"""The metadata API role (``openkeel metadata``; in the all-in-one under ``/metadata``): Nova's
OpenStack and EC2 metadata for the guest asking, found by the Neutron metadata proxy's signed
headers or by its fixed IP address (decision 0058)."""
