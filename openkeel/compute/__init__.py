"""The compute role: one per host; runs guests through a virt driver (``service.ComputeService``)."""
