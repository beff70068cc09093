"""KubeVirt virt driver: servers as KubeVirt VirtualMachines (manifests built in ``manifests``)."""
