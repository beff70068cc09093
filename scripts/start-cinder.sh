#!/usr/bin/env bash
# start-cinder.sh - make sure a real Cinder (cinder 29.x: cinder-api, cinder-scheduler,
# cinder-volume) answers at 127.0.0.1:8776 for the Cinder adapter tests
# (tests/volume/test_cinder_adapter.py). Called by scripts/test.sh under CI after
# start-keystone.sh; run it by hand before those tests locally. Idempotent: a Cinder already
# answering is kept (CINDER_FORCE=1 re-configures, re-registers and restarts it).
#
# What it does (decision 0068):
#   1. venv $VENV [/tmp/cinder-venv] with cinder==$CINDER_VERSION, PyMySQL, gunicorn, fixtures
#      (cinder.tests.unit.utils, which the fake driver imports, needs it),
#      python-keystoneclient (registration below).
#   2. database $DB_NAME on the machine's MariaDB (root over 127.0.0.1:3306) with its own user;
#      `cinder-manage db sync`. RabbitMQ (guest on 127.0.0.1:5672), vhost $RABBIT_VHOST when
#      rabbitmqctl can make it (else /): the api, scheduler and volume services talk over it.
#   3. cinder.conf under $DATA [/tmp/cinder-data]: one back end `fake` with Cinder's own
#      FakeLoggingVolumeDriver (cinder.tests.fake_driver, shipped in the wheel; what Cinder's
#      functional tests run), through a subclass in $DATA/openkeel_fake_driver.py that only
#      adds `multiattach: True` to its stats (so a multiattach type's volume is placed): the
#      LVM driver's code with a fake volume group and a logging executor, so nothing needs a
#      disk, a loop device or root. Creates, deletes, snapshots,
#      clones and extends succeed at once; a connection is {'driver_volume_type': 'iscsi',
#      'data': {'access_mode': 'rw'}}.
#   4. Keystone (start-keystone.sh's, admin / $ADMIN_PASSWORD): user `cinder` (admin and service
#      on project `service`: Cinder's token validation, and OpenKeel's [cinder] admin calls in
#      the tests), projects `cinder-demo` and `cinder-other` with users of the same names
#      (role member, password $DEMO_PASSWORD: the tests' users), services `volumev3` (cinderv3,
#      Nova's catalog_info default) and `block-storage` (cinder) at http://127.0.0.1:$PORT/v3
#      (no project id in the URL: Cinder takes it from the token).
#   5. cinder-api (cinder.wsgi.api:application under gunicorn, one worker) on 127.0.0.1:$PORT,
#      cinder-scheduler and cinder-volume as daemons; logs in $DATA. Waits until the volume
#      service reports up (`cinder-manage service list`).
#
# Stop:  for p in $DATA/*.pid; do kill $(cat $p); done      Wipe: CINDER_WIPE=1 (drops the DB)
set -euo pipefail

VENV=${VENV:-/tmp/cinder-venv}
DATA=${CINDER_DATA:-/tmp/cinder-data}
PORT=${CINDER_PORT:-8776}
CINDER_VERSION=${CINDER_VERSION:-29.0.0}
ADMIN_PASSWORD=${ADMIN_PASSWORD:-admin-secret}
KS_URL=${KS_URL:-http://127.0.0.1:5000/v3}
REGION=${REGION:-RegionOne}
DB_NAME=${CINDER_DB:-openkeel_cinder}
DB_PASSWORD=${CINDER_DB_PASSWORD:-cinder-secret}
SERVICE_PASSWORD=${CINDER_SERVICE_PASSWORD:-cinder-secret}
DEMO_PASSWORD=${CINDER_DEMO_PASSWORD:-cinder-demo-secret}
RABBIT_VHOST=${CINDER_RABBIT_VHOST:-cinder}
URL="http://127.0.0.1:$PORT"
LOG=${CINDER_LOG:-$DATA/start.log}
export PYTHONWARNINGS=${PYTHONWARNINGS:-ignore}

mkdir -p "$DATA"
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$LOG"; }
alive() { local p; p=$(cat "$DATA/$1.pid" 2>/dev/null || true); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

if [ -z "${CINDER_FORCE:-}${CINDER_WIPE:-}" ] && curl -s -o /dev/null --max-time 5 "$URL/" \
        && alive scheduler && alive volume; then
    echo "cinder already answering at $URL"
    exit 0
fi
if ! curl -sf -o /dev/null --max-time 5 "$KS_URL"; then
    echo "start-cinder.sh: Keystone not answering at $KS_URL (run scripts/start-keystone.sh)" >&2
    exit 1
fi
for name in api scheduler volume; do
    OLD_PID=$(cat "$DATA/$name.pid" 2>/dev/null || true)
    if [ -n "$OLD_PID" ] && kill -0 "$OLD_PID" 2>/dev/null; then
        stamp "stopping the old cinder-$name (PID $OLD_PID)"
        kill "$OLD_PID"
        for _ in $(seq 1 40); do kill -0 "$OLD_PID" 2>/dev/null || break; sleep 0.25; done
    fi
done

# ---------------------------------------------------------------- 1. venv
if [ ! -x "$VENV/bin/python" ]; then
    stamp "creating venv $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip setuptools wheel >>"$LOG" 2>&1
fi
have=$("$VENV/bin/pip" show cinder 2>/dev/null | awk '/^Version:/{print $2}' || true)
if [ "$have" != "$CINDER_VERSION" ] || [ ! -x "$VENV/bin/gunicorn" ] \
        || ! "$VENV/bin/python" -c "import fixtures" 2>/dev/null; then
    stamp "pip install cinder==$CINDER_VERSION PyMySQL gunicorn (a few minutes cold)"
    "$VENV/bin/pip" install -q "cinder==$CINDER_VERSION" PyMySQL gunicorn python-keystoneclient fixtures \
        >>"$LOG" 2>&1
fi

# ---------------------------------------------------------------- 2. database, RabbitMQ
if [ -n "${CINDER_WIPE:-}" ]; then
    stamp "wiping database $DB_NAME"
    mysql -h 127.0.0.1 -u root -e "DROP DATABASE IF EXISTS $DB_NAME"
fi
mysql -h 127.0.0.1 -u root <<SQL
CREATE DATABASE IF NOT EXISTS $DB_NAME CHARACTER SET utf8mb4;
CREATE USER IF NOT EXISTS 'cinder'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
CREATE USER IF NOT EXISTS 'cinder'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
GRANT ALL PRIVILEGES ON $DB_NAME.* TO 'cinder'@'127.0.0.1';
GRANT ALL PRIVILEGES ON $DB_NAME.* TO 'cinder'@'localhost';
SQL
VHOST=/
if command -v rabbitmqctl >/dev/null 2>&1 \
        && { rabbitmqctl list_vhosts 2>/dev/null | grep -qx "$RABBIT_VHOST" \
             || rabbitmqctl add_vhost "$RABBIT_VHOST" >>"$LOG" 2>&1; } \
        && rabbitmqctl set_permissions -p "$RABBIT_VHOST" guest ".*" ".*" ".*" >>"$LOG" 2>&1; then
    VHOST=$RABBIT_VHOST
fi

# ---------------------------------------------------------------- 3. config
cp -n "$VENV/etc/cinder/api-paste.ini" "$DATA/api-paste.ini" 2>/dev/null || true
cp -n "$VENV/etc/cinder/resource_filters.json" "$DATA/resource_filters.json" 2>/dev/null || true
SERVICE_AUTH="auth_url = ${KS_URL%/v3}
auth_type = password
username = cinder
password = $SERVICE_PASSWORD
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = $REGION"
cat > "$DATA/cinder.conf" <<EOF
[DEFAULT]
host = openkeel-cinder
my_ip = 127.0.0.1
osapi_volume_listen = 127.0.0.1
osapi_volume_listen_port = $PORT
osapi_volume_workers = 1
state_path = $DATA/state
api_paste_config = $DATA/api-paste.ini
resource_query_filters_file = $DATA/resource_filters.json
auth_strategy = keystone
transport_url = rabbit://guest:guest@127.0.0.1:5672/${VHOST#/}
enabled_backends = fake
default_volume_type = __DEFAULT__
storage_availability_zone = nova
default_availability_zone = nova
debug = false

[database]
connection = mysql+pymysql://cinder:$DB_PASSWORD@127.0.0.1/$DB_NAME?charset=utf8mb4

[keystone_authtoken]
www_authenticate_uri = ${KS_URL%/v3}
$SERVICE_AUTH

[nova]
$SERVICE_AUTH
interface = public

[oslo_concurrency]
lock_path = $DATA/lock

[oslo_messaging_notifications]
driver = noop

[coordination]
backend_url = file://$DATA/coordination

[fake]
volume_driver = openkeel_fake_driver.MultiattachFakeLoggingVolumeDriver
volume_backend_name = fake
EOF
mkdir -p "$DATA/state" "$DATA/lock" "$DATA/coordination"
CONF_ARGS=(--config-file "$DATA/cinder.conf")

stamp "cinder-manage db sync"
"$VENV/bin/cinder-manage" "${CONF_ARGS[@]}" db sync >>"$LOG" 2>&1

# ---------------------------------------------------------------- 4. keystone
stamp "registering users cinder, cinder-demo, cinder-other and the volume endpoints $URL/v3"
"$VENV/bin/python" - "$KS_URL" "$ADMIN_PASSWORD" "$SERVICE_PASSWORD" "$DEMO_PASSWORD" "$REGION" "$URL/v3" <<'PY' >>"$LOG" 2>&1
import sys
from keystoneauth1 import session
from keystoneauth1.identity import v3
from keystoneclient.v3 import client

ks_url, admin_password, password, demo_password, region, url = sys.argv[1:]
auth = v3.Password(auth_url=ks_url, username="admin", password=admin_password,
                   project_name="admin", user_domain_id="default", project_domain_id="default")
ks = client.Client(session=session.Session(auth=auth))


def project(name):
    return next(iter(ks.projects.list(name=name, domain="default")), None) \
        or ks.projects.create(name=name, domain="default")


def role(name):
    return next(iter(ks.roles.list(name=name)), None) or ks.roles.create(name=name)


def user(name, secret, roles, on):
    found = next(iter(ks.users.list(name=name, domain="default")), None)
    if found is None:
        found = ks.users.create(name=name, domain="default", password=secret)
    else:
        ks.users.update(found, password=secret)
    for r in roles:
        ks.roles.grant(r, user=found, project=on)


user("cinder", password, [role("admin"), role("service")], project("service"))
for name in ("cinder-demo", "cinder-other"):
    user(name, demo_password, [role("member"), role("reader")], project(name))
for kind, name in (("volumev3", "cinderv3"), ("block-storage", "cinder")):
    svcs = ks.services.list(type=kind)
    svc = svcs[0] if svcs else ks.services.create(name=name, type=kind,
                                                  description="Cinder (OpenKeel tests)")
    have = {e.interface: e for e in ks.endpoints.list(service=svc)}
    for iface in ("public", "internal", "admin"):
        ep = have.get(iface)
        if ep is None:
            ks.endpoints.create(service=svc, url=url, interface=iface, region=region)
        elif ep.url != url or ep.region != region:
            ks.endpoints.update(ep, url=url, region=region)
    print("registered", kind, "->", url)
PY

# ---------------------------------------------------------------- 5. serve
# cinder.wsgi.wsgi.initialize_application parses sys.argv: under gunicorn that is gunicorn's.
cat > "$DATA/cinder_wsgi_shim.py" <<PY
import sys
sys.argv = ["cinder-api", "--config-file", "$DATA/cinder.conf", "--log-file", "$DATA/api.log"]
from cinder.wsgi.api import application  # noqa: E402,F401
PY
# The fake driver's stats name no `multiattach` capability (the LVM driver it derives from
# does): the scheduler's CapabilitiesFilter would drop the back end for a multiattach type's
# volume (decision 0075). The subclass adds it to the pool's stats and changes nothing else.
cat > "$DATA/openkeel_fake_driver.py" <<'PY'
from cinder.tests.fake_driver import FakeLoggingVolumeDriver


class MultiattachFakeLoggingVolumeDriver(FakeLoggingVolumeDriver):
    def _update_volume_stats(self):
        super()._update_volume_stats()
        self._stats["multiattach"] = True
        for pool in self._stats["pools"]:
            pool["multiattach"] = True
PY
stamp "starting cinder-scheduler and cinder-volume"
for name in scheduler volume; do
    # setsid: its own session, so it outlives the shell (and process group) that started it
    PYTHONPATH="$DATA" setsid nohup "$VENV/bin/cinder-$name" "${CONF_ARGS[@]}" \
        --log-file "$DATA/$name.log" \
        >>"$DATA/$name.out" 2>&1 < /dev/null &
    echo $! > "$DATA/$name.pid"
done
stamp "starting cinder-api (gunicorn) on 127.0.0.1:$PORT"
"$VENV/bin/gunicorn" --pythonpath "$DATA" cinder_wsgi_shim:application \
    --bind "127.0.0.1:$PORT" --workers 1 --threads 4 --timeout 120 \
    --pid "$DATA/api.pid" --daemon \
    --access-logfile "$DATA/access.log" --error-logfile "$DATA/gunicorn.log" \
    --access-logformat '%(t)s "%(r)s" %(s)s %(M)sms'
for _ in $(seq 1 240); do
    curl -s -o /dev/null "$URL/" && break
    sleep 0.5
done
if ! curl -s -o /dev/null "$URL/"; then
    echo "cinder-api did not come up; see $DATA/gunicorn.log $DATA/api.log" >&2
    exit 1
fi
# The scheduler places volumes only on a back end whose volume service reported up.
up() {
    "$VENV/bin/cinder-manage" "${CONF_ARGS[@]}" service list 2>/dev/null \
        | grep -E '^cinder-volume +openkeel-cinder@fake .*:-\)' >/dev/null
}
for _ in $(seq 1 120); do up && break; sleep 1; done
if ! up; then
    echo "cinder-volume did not report up; see $DATA/volume.log $DATA/scheduler.log" >&2
    exit 1
fi
stamp "cinder answering at $URL (api PID $(cat "$DATA/api.pid")); logs: $DATA/*.log"
