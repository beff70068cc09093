"""OpenKeel: OpenStack Compute (the Nova 34.0.0 API) with KubeVirt as the hypervisor."""
