"""Pure functions turning an InstanceSpec into KubeVirt/CDI/Kubernetes objects (plain dicts).

Entry point: :func:`openkeel.virt.kubevirt.manifests.vm.build_server` (called by the KubeVirt
driver's spawn/rebuild). No I/O, no clock, no randomness: equal inputs give equal manifests.
"""
