#!/usr/bin/env bash
# tempest.sh - tempest's compute API tests against a fresh all-in-one in Keystone mode.
#
#   bash scripts/tempest.sh [REGEX]        default REGEX: tempest.api.compute
#
# Starts (or reuses) the real Keystone of scripts/start-keystone.sh, which registers the compute
# endpoint at $COMPUTE_URL (default http://127.0.0.1:8774/v2.1); starts an all-in-one there in a
# temporary data dir with [api] auth_strategy = keystone; writes a tempest.conf (dynamic
# credentials from the Keystone admin, one worker, the features the all-in-one offers: two
# hosts, resize, cold and live migration, its image API registered in Keystone's catalog, its
# network service (Nova's network proxies and floating IPs on its public network), its volume
# service (Cinder v3 under /volume, with a multiattach volume type)); runs
# `tempest run --regex REGEX`; prints the totals and the failures grouped by their cause.
# TEMPEST_VOLUME=cinder uses the real Cinder of scripts/start-cinder.sh (in Keystone's catalog as
# volumev3) as the all-in-one's volume backend; by default its embedded volume API serves, listed
# in the catalog under its own type (openkeel-volumev3, so that a real Cinder's volumev3
# entries, if any, do not hide it).
# TEMPEST_NETWORK=neutron uses the real neutron-server of scripts/start-neutron.sh (in Keystone's
# catalog as network; not restarted) as the all-in-one's network backend and as tempest's network
# service: one compute host named host-ovs-filter-active (the host Neutron's `test` mechanism
# driver binds ACTIVE at once: no agents here), and, made through Neutron's API (reused if
# there, deleted at exit), a shared fixed network tempest's servers boot on and an external
# network with a subnet and a router to the fixed subnet (the floating IP pool).
# TEMPEST_IDENTITY=embedded runs the all-in-one on its own identity service instead (tempest's
# dynamic credentials then create their projects and users there; no Keystone needed).
# Not part of scripts/test.sh (a full run takes long); the work dir is kept for inspection.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REGEX=${1:-tempest.api.compute}
PY=${PYTHON:-$ROOT/.venv/bin/python}
BIN=$(dirname "$PY")
export ADMIN_PASSWORD=${ADMIN_PASSWORD:-admin-secret}
export COMPUTE_URL=${COMPUTE_URL:-http://127.0.0.1:8774/v2.1}
PORT=$(echo "$COMPUTE_URL" | sed -E 's#^https?://[^:/]+:([0-9]+).*#\1#')
KS=http://127.0.0.1:5000
WORK=${TEMPEST_WORK:-$(mktemp -d /tmp/openkeel-tempest.XXXXXX)}
mkdir -p "$WORK"
log() { printf '[tempest.sh] %s\n' "$*"; }

IDENTITY=${TEMPEST_IDENTITY:-keystone}
VOLUME=${TEMPEST_VOLUME:-embedded}
NETWORK=${TEMPEST_NETWORK:-embedded}
HOSTS=2
VOLUME_TYPE=openkeel-volumev3
NETWORK_TYPE=openkeel-network  # the same for its network API (a real Neutron may be listed)
[ -x "$BIN/tempest" ] || { echo "tempest is not installed: pip install -e '.[oracle]'" >&2; exit 1; }
if [ "$IDENTITY" = embedded ]; then
    KS=${COMPUTE_URL%/v2.1}/identity
else
    bash "$ROOT/scripts/start-keystone.sh"
fi
if curl -s -o /dev/null --max-time 2 "$COMPUTE_URL/"; then
    echo "tempest.sh: something already answers at $COMPUTE_URL; stop it first" >&2
    exit 1
fi

if [ "$IDENTITY" = embedded ]; then
    : >"$WORK/openkeel.conf"
    VOLUME_TYPE=volumev3  # the embedded identity service's catalog lists them so
    NETWORK_TYPE=network
else
    cat >"$WORK/openkeel.conf" <<CONF
[api]
auth_strategy = keystone
[keystone_authtoken]
auth_url = $KS/v3
www_authenticate_uri = $KS
username = admin
password = $ADMIN_PASSWORD
project_name = admin
user_domain_id = default
project_domain_id = default
CONF
    if [ "$VOLUME" = cinder ]; then
        bash "$ROOT/scripts/start-cinder.sh"
        VOLUME_TYPE=volumev3
        cat >>"$WORK/openkeel.conf" <<CONF
[openkeel_volume]
backend = cinder
[cinder]
auth_type = password
auth_url = $KS/v3
username = cinder
password = ${CINDER_SERVICE_PASSWORD:-cinder-secret}
project_name = service
user_domain_name = Default
project_domain_name = Default
os_region_name = RegionOne
CONF
    fi
fi
if [ "$NETWORK" = neutron ]; then
    [ "$IDENTITY" != embedded ] || { echo "TEMPEST_NETWORK=neutron needs Keystone" >&2; exit 1; }
    curl -s -o /dev/null --max-time 3 http://127.0.0.1:9696/ \
        || { echo "no neutron-server at 127.0.0.1:9696: run scripts/start-neutron.sh" >&2; exit 1; }
    NETWORK_TYPE=network
    HOSTS=1
    cat >>"$WORK/openkeel.conf" <<CONF
[DEFAULT]
host = host-ovs-filter-active
[openkeel_network]
backend = neutron
[neutron]
auth_type = password
auth_url = $KS/v3
username = nova
password = ${NEUTRON_SERVICE_PASSWORD:-neutron-secret}
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
valid_interfaces = public
default_floating_pool = openkeel-tempest-public
CONF
fi
log "all-in-one in $WORK/data (log: $WORK/data/openkeel.log)"
"$PY" -m openkeel.cmd.main all-in-one --data-dir "$WORK/data" --port "$PORT" --hosts "$HOSTS" \
    --config-file "$WORK/openkeel.conf" >"$WORK/all-in-one.out" 2>&1 &
AIO=$!
trap 'kill "$AIO" 2>/dev/null || true; wait "$AIO" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
    curl -s -o /dev/null --max-time 2 "$COMPUTE_URL/" && break
    kill -0 "$AIO" 2>/dev/null || { cat "$WORK/all-in-one.out" >&2; exit 1; }
    sleep 0.5
done
if [ "$IDENTITY" = embedded ]; then
    ADMIN_PASSWORD=$(cat "$WORK/data/admin-password")
fi
TOKEN=$(curl -si "$KS/v3/auth/tokens" -H 'Content-Type: application/json' \
    -d "{\"auth\":{\"identity\":{\"methods\":[\"password\"],\"password\":{\"user\":{\"name\":\"admin\",\"domain\":{\"id\":\"default\"},\"password\":\"$ADMIN_PASSWORD\"}}},\"scope\":{\"project\":{\"name\":\"admin\",\"domain\":{\"id\":\"default\"}}}}}" \
    | awk -F': ' 'tolower($1)=="x-subject-token"{print $2}' | tr -d '\r')
# The image the tests boot: one with data (tests copy its bytes into images of their own; the
# all-in-one's seeded cirros entry names data it does not hold).
head -c 1048576 /dev/urandom >"$WORK/disk.raw"
IMAGE=$(curl -s -H "X-Auth-Token: $TOKEN" -H 'Content-Type: application/json' \
    -d '{"name": "tempest-disk", "disk_format": "raw", "container_format": "bare", "visibility": "public"}' \
    "${COMPUTE_URL%/v2.1}/image/v2/images" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
curl -sf -X PUT -H "X-Auth-Token: $TOKEN" -H 'Content-Type: application/octet-stream' \
    --data-binary @"$WORK/disk.raw" "${COMPUTE_URL%/v2.1}/image/v2/images/$IMAGE/file"
# A multiattach volume type (decision 0075) for tempest's multiattach tests: on the embedded
# volume service, or on the real Cinder (whose back end reports the capability since
# start-cinder.sh's driver subclass; the type may be there already: a 409 then).
MULTIATTACH=true
MULTIATTACH_TYPE=multiattach
TYPES_URL=${COMPUTE_URL%/v2.1}/volume/v3/types
if [ "$VOLUME" = cinder ]; then TYPES_URL=http://127.0.0.1:${CINDER_PORT:-8776}/v3/types; fi
curl -s -o /dev/null -H "X-Auth-Token: $TOKEN" -H 'Content-Type: application/json' \
    -d '{"volume_type": {"name": "multiattach", "extra_specs": {"multiattach": "<is> True"}}}' \
    "$TYPES_URL"
# The all-in-one's external network (its floating IP pool), for the floating IP tests.
FIXED_NETWORK=
POOL=public
if [ "$NETWORK" = neutron ]; then
    # In the real Neutron: the shared fixed network, the external one and the router between.
    neutron_topology() {
        "$PY" - "$KS/v3" "$ADMIN_PASSWORD" "$1" <<'PYEOF'
import sys
from keystoneauth1 import session
from keystoneauth1.identity import v3
url, password, what = sys.argv[1:]
ks = session.Session(auth=v3.Password(auth_url=url, username="admin", password=password,
                                      project_name="admin", user_domain_id="default",
                                      project_domain_id="default"))
net = {"endpoint_filter": {"service_type": "network", "interface": "public"}}
def api(method, path, body=None, ok=(200, 201, 204)):
    r = ks.request("/v2.0/" + path, method, json=body, raise_exc=False, **net)
    if r.status_code not in ok:
        raise SystemExit(f"{method} {path}: {r.status_code} {r.text}")
    return r.json() if r.content else {}
def find(kind, name):
    found = api("GET", f"{kind}?name={name}")[kind]
    return found[0] if found else None
ROUTER, FIXED, PUBLIC = "openkeel-tempest-router", "openkeel-tempest-fixed", "openkeel-tempest-public"
if what == "remove":
    router = find("routers", ROUTER)
    fixed = find("networks", FIXED)
    if router:
        for subnet in fixed["subnets"] if fixed else ():
            api("PUT", f"routers/{router['id']}/remove_router_interface", {"subnet_id": subnet},
                ok=(200, 404))
        api("DELETE", f"routers/{router['id']}", ok=(204, 404))
    for name in (FIXED, PUBLIC):
        network = find("networks", name)
        if network:  # what the tests left on it (floating IPs, ports) first
            for fip in api("GET", f"floatingips?floating_network_id={network['id']}")["floatingips"]:
                api("DELETE", f"floatingips/{fip['id']}", ok=(204, 404))
            for port in api("GET", f"ports?network_id={network['id']}")["ports"]:
                if not port["device_owner"].startswith("network:"):
                    api("DELETE", f"ports/{port['id']}", ok=(204, 404))
            api("DELETE", f"networks/{network['id']}", ok=(204, 404, 409))
    raise SystemExit(0)
def network(name, cidr, **attrs):
    found = find("networks", name)
    if found is None:
        found = api("POST", "networks", {"network": {"name": name, **attrs}})["network"]
    if not found["subnets"]:
        subnet = api("POST", "subnets", {"subnet": {"network_id": found["id"], "cidr": cidr,
                                                    "ip_version": 4, "name": name}})["subnet"]
        found["subnets"] = [subnet["id"]]
    return found
public = network(PUBLIC, "172.24.40.0/24", **{"router:external": True})
fixed = network(FIXED, "10.40.0.0/24", shared=True)
router = find("routers", ROUTER) or api("POST", "routers", {"router": {"name": ROUTER}})["router"]
if not router.get("external_gateway_info"):
    api("PUT", f"routers/{router['id']}",
        {"router": {"external_gateway_info": {"network_id": public["id"]}}})
if not api("GET", f"ports?device_id={router['id']}&network_id={fixed['id']}")["ports"]:
    api("PUT", f"routers/{router['id']}/add_router_interface", {"subnet_id": fixed["subnets"][0]})
print(public["id"])
PYEOF
    }
    PUBLIC=$(neutron_topology add)
    FIXED_NETWORK=openkeel-tempest-fixed
    POOL=openkeel-tempest-public
else
    PUBLIC=$(curl -s -H "X-Auth-Token: $TOKEN" "${COMPUTE_URL%/v2.1}/networking/v2.0/networks?name=public" \
        | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["networks"][0]["id"])')
fi

# The all-in-one's image API (Glance v2 under /image), network API (Neutron v2.0 under
# /networking) and volume API (Cinder v3 under /volume/v3) in Keystone's catalog for this run;
# the services are removed again at exit (the Keystone tests expect a catalog without them).
catalog() {
    "$PY" - "$KS/v3" "$ADMIN_PASSWORD" "${COMPUTE_URL%/v2.1}/image" "$1" "$VOLUME" "$NETWORK" <<'PYEOF'
import sys
from keystoneauth1 import session
from keystoneauth1.identity import v3
url, password, image_url, what, volume, network = sys.argv[1:]
ks = session.Session(auth=v3.Password(auth_url=url, username="admin", password=password,
                                      project_name="admin", user_domain_id="default",
                                      project_domain_id="default"))
base = image_url.removesuffix("/image")
services = [("image", "openkeel-image", image_url)]
if network == "embedded":
    services.append(("openkeel-network", "openkeel-network", base + "/networking"))
if volume == "embedded":
    services.append(("openkeel-volumev3", "openkeel-volumev3", base + "/volume/v3"))
for kind, name, where in services:
    for old in ks.get(f"{url}/services?type={kind}&name={name}").json()["services"]:
        ks.delete(f"{url}/services/{old['id']}")  # its endpoints go with it
    if what == "add":
        sid = ks.post(f"{url}/services", json={"service": {"type": kind,
                                                           "name": name}}).json()["service"]["id"]
        for iface in ("public", "internal", "admin"):
            ks.post(f"{url}/endpoints", json={"endpoint": {"service_id": sid, "interface": iface,
                                                           "url": where, "region_id": "RegionOne"}})
PYEOF
}
if [ "$IDENTITY" != embedded ]; then  # the embedded identity service lists the image API
    catalog add
    trap 'catalog remove || true; kill "$AIO" 2>/dev/null || true; wait "$AIO" 2>/dev/null || true' EXIT
fi
if [ "$NETWORK" = neutron ]; then  # after the all-in-one stops (its ports are gone by then)
    trap 'catalog remove || true; kill "$AIO" 2>/dev/null || true; wait "$AIO" 2>/dev/null || true
          neutron_topology remove || true' EXIT
fi

cd "$WORK"
[ -d ws ] || "$BIN/tempest" init --name "openkeel-$(basename "$WORK")" ws >/dev/null
cat >ws/etc/tempest.conf <<CONF
[DEFAULT]
log_file = tempest.log
[auth]
use_dynamic_credentials = true
# The embedded network service has no routers: tempest's projects boot on the shared private
# network (what a server without networks gets; with Neutron: the fixed network made above)
# instead of networks of their own.
create_isolated_networks = false
admin_username = admin
admin_password = $ADMIN_PASSWORD
admin_project_name = admin
admin_domain_name = Default
[identity]
uri_v3 = $KS/v3
auth_version = v3
region = RegionOne
[identity-feature-enabled]
api_v2 = false
[compute]
image_ref = $IMAGE
image_ref_alt = $IMAGE
flavor_ref = 1
flavor_ref_alt = 2
min_compute_nodes = $HOSTS
fixed_network_name = $FIXED_NETWORK
min_microversion = 2.1
max_microversion = latest
build_timeout = 120
[compute-feature-enabled]
resize = true
cold_migration = true
live_migration = true
block_migration_for_live_migration = false
console_output = true
vnc_console = true
interface_attach = true
snapshot = true
suspend = true
pause = true
shelve = true
rescue = true
stable_rescue = true
change_password = true
attach_encrypted_volume = false
swap_volume = true
volume_multiattach = $MULTIATTACH
personality = false
[image]
image_path =
[image-feature-enabled]
import_image = false
[service_available]
glance = true
neutron = true
cinder = true
swift = false
[volume]
catalog_type = $VOLUME_TYPE
volume_type_multiattach = $MULTIATTACH_TYPE
[network]
catalog_type = $NETWORK_TYPE
public_network_id = $PUBLIC
floating_network_name = $POOL
[network-feature-enabled]
floating_ips = true
[validation]
run_validation = false
CONF
log "tempest run --regex '$REGEX' (workspace $WORK/ws)"
cd ws
status=0
"$BIN/tempest" run --regex "$REGEX" --concurrency 1 >"$WORK/tempest-run.out" 2>&1 || status=$?
tail -n 8 "$WORK/tempest-run.out"
"$BIN/stestr" last --subunit 2>/dev/null | "$PY" "$ROOT/scripts/tempest_summary.py" || true
log "details: $WORK/tempest-run.out, $WORK/ws/tempest.log"
exit "$status"
