#!/usr/bin/env bash
# Make sure a real kube-apiserver (etcd + apiserver on 127.0.0.1:16443, no kubelet/controllers)
# with the KubeVirt and CDI CRDs is answering, for the KubeVirt driver tests and benchmark.
# Called by scripts/test.sh when CI or OPENKEEL_START_KUBE is set; safe to run again (idempotent):
#   * builds the server once per machine if the binary is missing (~12 min on 2 cores),
#   * starts it if /readyz does not answer,
#   * installs the CRDs if virtualmachines.kubevirt.io is not there yet (and our
#     VirtualMachineExport CRD, deploy/kubernetes/crds/).
# Wraps ../shared/tools/kube-apiserver.sh. Env:
#   KUBE_APISERVER_SH  path of kube-apiserver.sh  [<repo>/../shared/tools/kube-apiserver.sh]
#   K8S_DIR            state folder, kubeconfig in $K8S_DIR/kubeconfig  [/tmp/k8s-try]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=$(cd "$ROOT/.." && pwd)/shared
[ -d "$SHARED/spec/kubevirt" ] || SHARED=/work/shared
KUBE_SH=${KUBE_APISERVER_SH:-$SHARED/tools/kube-apiserver.sh}
export K8S_DIR=${K8S_DIR:-/tmp/k8s-try}
export KUBECONFIG=$K8S_DIR/kubeconfig
PORT=${K8S_API_PORT:-16443}
RUN=$K8S_DIR/run

answering() {
  [ -f "$RUN/pki/admin.token" ] && [ -f "$KUBECONFIG" ] || return 1
  curl -sf --max-time 3 --cacert "$RUN/pki/ca.crt" \
    -H "Authorization: Bearer $(cat "$RUN/pki/admin.token")" \
    "https://127.0.0.1:$PORT/readyz" >/dev/null
}

if [ ! -x "$K8S_DIR/bin/kube-apiserver" ] || ! command -v etcd >/dev/null 2>&1 \
  || ! command -v kubectl >/dev/null 2>&1; then
  echo "kube-apiserver: installing (one time, ~12 minutes)"
  bash "$KUBE_SH" install
fi
if ! answering; then
  bash "$KUBE_SH" down >/dev/null 2>&1 || true
  bash "$KUBE_SH" up
fi
if ! kubectl get crd virtualmachines.kubevirt.io >/dev/null 2>&1; then
  bash "$KUBE_SH" crds "$SHARED/spec/kubevirt/crds"
fi
if ! kubectl get crd datavolumes.cdi.kubevirt.io >/dev/null 2>&1; then
  bash "$KUBE_SH" crds "$SHARED/spec/cdi/crds"
fi
# KubeVirt's export.kubevirt.io CRD is not among the spec's CRDs: ours is built from its
# swagger.json (scripts/gen_export_crd.py, decision 0071).
if ! kubectl get crd virtualmachineexports.export.kubevirt.io >/dev/null 2>&1; then
  kubectl create -f "$ROOT/deploy/kubernetes/crds/virtualmachineexports.export.kubevirt.io.yaml"
  kubectl wait --for condition=established --timeout=60s crd/virtualmachineexports.export.kubevirt.io
fi
echo "kube-apiserver: answering on 127.0.0.1:$PORT (KUBECONFIG=$KUBECONFIG)"
