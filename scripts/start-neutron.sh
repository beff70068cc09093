#!/usr/bin/env bash
# start-neutron.sh - make sure a real neutron-server (neutron 29.x, ML2) answers at
# 127.0.0.1:9696 for the Neutron adapter tests (tests/network/test_neutron_adapter*.py).
# Called by scripts/test.sh under CI after start-keystone.sh; run it by hand before those
# tests locally. Idempotent: a neutron-server already answering is kept (NEUTRON_FORCE=1
# re-configures, re-registers and restarts it).
#
# What it does (decision 0056):
#   1. venv $VENV [/tmp/neutron-venv] with neutron==$NEUTRON_VERSION, PyMySQL, gunicorn.
#   2. database $DB_NAME on the machine's MariaDB (root over 127.0.0.1:3306, as the DB tests
#      use it) with its own user; `neutron-db-manage upgrade heads`.
#   3. neutron.conf + ml2_conf.ini under $DATA [/tmp/neutron-data]: ML2 with the flat, vlan and
#      local type drivers (tenant networks: local, nothing to wire), port security, the router
#      service plugin (floating IPs in the API; no L3 agent), the auto_allocate plugin (2.37's
#      `networks: auto`: GET /v2.0/auto-allocated-topology/<project>), no DHCP/L3/L2 agents, oslo.messaging's
#      in-process fake transport (nothing listens for agent casts). Mechanism driver: Neutron's
#      own `test` driver (neutron.tests.unit...mechanism_test), the one ML2 driver it ships that
#      binds ports without an agent or OVN: it binds by host name (host-ovs-no_filter: ovs,
#      port stays DOWN; host-ovs-filter-active: ovs, port ACTIVE at once; host-fail: binding
#      failed; any other host: not bound). Its bookkeeping asserts are switched off
#      (PYTHONOPTIMIZE) so a restarted server can still update and delete old ports, and its
#      binding-level self-checks too, so a port binding can be activated (decision 0072).
#   4. Keystone (start-keystone.sh's, admin / $ADMIN_PASSWORD): users `neutron` and `nova`
#      (roles admin and service on project `service`: Neutron lets only the service role change
#      a port's binding:profile, as Nova does when it unbinds), service type `network` with public/internal/admin endpoints at
#      http://127.0.0.1:$PORT; Neutron's [nova] section notifies the `compute` endpoint of the
#      catalog (OpenKeel's os-server-external-events) of port status and data changes.
#   5. neutron.wsgi.api:application under gunicorn (one worker) on 127.0.0.1:$PORT, logs in $DATA.
#
# OpenKeel's [neutron] section: auth_type password, auth_url $KS_URL, username nova, password
# $SERVICE_PASSWORD, project_name service, user/project_domain_name Default, region RegionOne.
# NEUTRON_QOS=1 loads the qos service plugin and ML2's qos extension driver: QoS policies with
# minimum bandwidth / packet rate rules, ports' resource_request (decision 0076).
# A second server beside the catalog's: NEUTRON_PORT=9697 NEUTRON_DATA=/tmp/neutron-2
# NEUTRON_DB=openkeel_neutron_2 NEUTRON_REGISTER_ENDPOINT=0 (its tests: OPENKEEL_TEST_NEUTRON_URL).
# Stop:  kill $(cat /tmp/neutron-data/neutron.pid)       Wipe: NEUTRON_WIPE=1 (drops the DB too)
set -euo pipefail

VENV=${VENV:-/tmp/neutron-venv}
DATA=${NEUTRON_DATA:-/tmp/neutron-data}
PORT=${NEUTRON_PORT:-9696}
NEUTRON_VERSION=${NEUTRON_VERSION:-29.0.0}
ADMIN_PASSWORD=${ADMIN_PASSWORD:-admin-secret}
KS_URL=${KS_URL:-http://127.0.0.1:5000/v3}
REGION=${REGION:-RegionOne}
DB_NAME=${NEUTRON_DB:-openkeel_neutron}
DB_PASSWORD=${NEUTRON_DB_PASSWORD:-neutron-secret}
SERVICE_PASSWORD=${NEUTRON_SERVICE_PASSWORD:-neutron-secret}
URL="http://127.0.0.1:$PORT"
LOG=${NEUTRON_LOG:-$DATA/start.log}
# 0: leave the catalog's network endpoint alone (a second server beside the shared one; its
# tests reach it with OPENKEEL_TEST_NEUTRON_URL, tests/network/neutron_server.py)
REGISTER=${NEUTRON_REGISTER_ENDPOINT:-1}
QOS=${NEUTRON_QOS:-}
export PYTHONWARNINGS=${PYTHONWARNINGS:-ignore}

mkdir -p "$DATA"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$LOG"; }

if [ -z "${NEUTRON_FORCE:-}${NEUTRON_WIPE:-}" ] && curl -s -o /dev/null --max-time 5 "$URL/"; then
    echo "neutron-server already answering at $URL"
    exit 0
fi
if ! curl -sf -o /dev/null --max-time 5 "$KS_URL"; then
    echo "start-neutron.sh: Keystone not answering at $KS_URL (run scripts/start-keystone.sh)" >&2
    exit 1
fi
PIDFILE="$DATA/neutron.pid"
OLD_PID=$(cat "$PIDFILE" 2>/dev/null || true)
if [ -n "$OLD_PID" ] && kill -0 "$OLD_PID" 2>/dev/null; then
    stamp "stopping the old neutron-server (PID $OLD_PID)"
    kill "$OLD_PID"
    for _ in $(seq 1 40); do kill -0 "$OLD_PID" 2>/dev/null || break; sleep 0.25; done
fi

# ---------------------------------------------------------------- 1. venv
if [ ! -x "$VENV/bin/python" ]; then
    stamp "creating venv $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip setuptools wheel >>"$LOG" 2>&1
fi
have=$("$VENV/bin/pip" show neutron 2>/dev/null | awk '/^Version:/{print $2}' || true)
if [ "$have" != "$NEUTRON_VERSION" ] || [ ! -x "$VENV/bin/gunicorn" ]; then
    stamp "pip install neutron==$NEUTRON_VERSION PyMySQL gunicorn (a few minutes cold)"
    "$VENV/bin/pip" install -q "neutron==$NEUTRON_VERSION" PyMySQL gunicorn >>"$LOG" 2>&1
fi

# ---------------------------------------------------------------- 2. database
if [ -n "${NEUTRON_WIPE:-}" ]; then
    stamp "wiping database $DB_NAME"
    mysql -h 127.0.0.1 -u root -e "DROP DATABASE IF EXISTS $DB_NAME"
fi
mysql -h 127.0.0.1 -u root <<SQL
CREATE DATABASE IF NOT EXISTS $DB_NAME CHARACTER SET utf8mb4;
CREATE USER IF NOT EXISTS 'neutron'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
CREATE USER IF NOT EXISTS 'neutron'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
GRANT ALL PRIVILEGES ON $DB_NAME.* TO 'neutron'@'127.0.0.1';
GRANT ALL PRIVILEGES ON $DB_NAME.* TO 'neutron'@'localhost';
SQL

# ---------------------------------------------------------------- 3. config
cp -n "$VENV/etc/neutron/api-paste.ini" "$DATA/api-paste.ini" 2>/dev/null || true
# Neutron's own user: to validate tokens, and to send Nova (the catalog's compute) its events.
SERVICE_AUTH="auth_url = ${KS_URL%/v3}
auth_type = password
username = neutron
password = $SERVICE_PASSWORD
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = $REGION"
cat > "$DATA/neutron.conf" <<EOF
[DEFAULT]
host = openkeel-neutron
bind_host = 127.0.0.1
bind_port = $PORT
state_path = $DATA/state
log_file = $DATA/neutron.log
debug = false
api_paste_config = $DATA/api-paste.ini
auth_strategy = keystone
core_plugin = ml2
service_plugins = router,auto_allocate${QOS:+,qos}
allow_overlapping_ips = true
api_workers = 1
rpc_workers = 0
rpc_state_report_workers = 0
# Nothing listens for agent casts: oslo.messaging's in-process fake transport.
transport_url = fake:/
notify_nova_on_port_status_changes = true
notify_nova_on_port_data_changes = true
send_events_interval = 1

[database]
connection = mysql+pymysql://neutron:$DB_PASSWORD@127.0.0.1/$DB_NAME?charset=utf8mb4

[keystone_authtoken]
www_authenticate_uri = ${KS_URL%/v3}
$SERVICE_AUTH

[nova]
$SERVICE_AUTH
endpoint_type = public

[oslo_concurrency]
lock_path = $DATA/lock

[oslo_messaging_notifications]
driver = noop

[agent]
root_helper =
EOF
cat > "$DATA/ml2_conf.ini" <<EOF
[ml2]
type_drivers = flat,vlan,local
tenant_network_types = local
mechanism_drivers = test
extension_drivers = port_security${QOS:+,qos}

[ml2_type_flat]
flat_networks = public,physnet1

[ml2_type_vlan]
network_vlan_ranges = physnet1:100:199

[securitygroup]
enable_security_group = true
firewall_driver = noop
EOF
CONF_ARGS=(--config-file "$DATA/neutron.conf" --config-file "$DATA/ml2_conf.ini")
mkdir -p "$DATA/state" "$DATA/lock"

stamp "neutron-db-manage upgrade heads"
"$VENV/bin/neutron-db-manage" "${CONF_ARGS[@]}" upgrade heads >>"$LOG" 2>&1

# ---------------------------------------------------------------- 4. keystone
stamp "registering user neutron and the network endpoint $URL in Keystone"
"$VENV/bin/python" - "$KS_URL" "$ADMIN_PASSWORD" "$SERVICE_PASSWORD" "$REGION" "$URL" "$REGISTER" <<'PY' >>"$LOG" 2>&1
import sys
from keystoneauth1 import session
from keystoneauth1.identity import v3
from keystoneclient.v3 import client

ks_url, admin_password, password, region, url, register = sys.argv[1:]
auth = v3.Password(auth_url=ks_url, username="admin", password=admin_password,
                   project_name="admin", user_domain_id="default", project_domain_id="default")
ks = client.Client(session=session.Session(auth=auth))
project = next(iter(ks.projects.list(name="service", domain="default")), None) \
    or ks.projects.create(name="service", domain="default")
roles = [next(iter(ks.roles.list(name=name)), None) or ks.roles.create(name=name)
         for name in ("admin", "service")]
for name in ("neutron", "nova"):
    user = next(iter(ks.users.list(name=name, domain="default")), None)
    if user is None:
        user = ks.users.create(name=name, domain="default", password=password)
    else:
        ks.users.update(user, password=password)
    for role in roles:
        ks.roles.grant(role, user=user, project=project)
svcs = ks.services.list(type="network")
svc = svcs[0] if svcs else ks.services.create(name="neutron", type="network",
                                              description="neutron-server (OpenKeel tests)")
have = {e.interface: e for e in ks.endpoints.list(service=svc)}
for iface in ("public", "internal", "admin") if register == "1" else ():
    ep = have.get(iface)
    if ep is None:
        ks.endpoints.create(service=svc, url=url, interface=iface, region=region)
    elif ep.url != url or ep.region != region:
        ks.endpoints.update(ep, url=url, region=region)
print("registered network (neutron) ->", url)
PY

# ---------------------------------------------------------------- 5. serve
# neutron.server.boot_server parses sys.argv: under gunicorn that is gunicorn's own argv.
# The test driver keeps the ports it bound in a set for its own asserts and removes a port's
# old binding with set.remove: that raises for a binding it never saw (made before a restart,
# or an unbind followed by a failed binding). A forgiving set keeps its binding rules intact.
cat > "$DATA/neutron_wsgi_shim.py" <<PY
import sys
sys.argv = ["neutron-api", "--config-file", "$DATA/neutron.conf",
            "--config-file", "$DATA/ml2_conf.ini"]
from neutron.tests.unit.plugins.ml2.drivers import mechanism_test  # noqa: E402


class _Bound(set):
    def remove(self, item):
        self.discard(item)


_initialize = mechanism_test.TestMechanismDriver.initialize


def _forgiving_initialize(self):
    _initialize(self)
    self.bound_ports = _Bound()
    if "$QOS":
        # What the openvswitch mechanism driver does when it loads: its QoS driver declares
        # the rules (minimum bandwidth / packet rate ...) its ovs-bound ports support;
        # without one Neutron refuses a port with such a policy (decision 0076).
        from neutron.services.qos.drivers.openvswitch import driver as ovs_qos

        ovs_qos.register()


mechanism_test.TestMechanismDriver.initialize = _forgiving_initialize


# Its self-checks of binding levels index them outside an assert; activating an inactive
# binding (PUT /v2.0/ports/<id>/bindings/<host>/activate, live migration: decision 0072)
# hands it the cleared source binding's levels as None, and levels[0] would fail the request
# with a 500. They hold nothing but asserts and those reads: off, as their asserts already are.
def _no_check(self, levels, top_segment, bottom_segment):
    return None


mechanism_test.TestMechanismDriver._check_bound = _no_check
mechanism_test.TestMechanismDriver._check_unbound = _no_check
from neutron.wsgi.api import application  # noqa: E402,F401
PY
stamp "starting neutron-server (gunicorn) on 127.0.0.1:$PORT"
PYTHONOPTIMIZE=1 "$VENV/bin/gunicorn" --pythonpath "$DATA" neutron_wsgi_shim:application \
    --bind "127.0.0.1:$PORT" --workers 1 --threads 4 --timeout 120 \
    --pid "$PIDFILE" --daemon \
    --access-logfile "$DATA/access.log" --error-logfile "$DATA/gunicorn.log" \
    --access-logformat '%(t)s "%(r)s" %(s)s %(M)sms'
for _ in $(seq 1 240); do
    curl -s -o /dev/null "$URL/" && break
    sleep 0.5
done
if ! curl -s -o /dev/null "$URL/"; then
    echo "neutron-server did not come up; see $DATA/gunicorn.log $DATA/neutron.log" >&2
    exit 1
fi
stamp "neutron-server answering at $URL (PID $(cat "$PIDFILE")); logs: $DATA/neutron.log"
