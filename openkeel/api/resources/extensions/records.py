"""The legacy extension records Nova 34 still lists at ``GET /extensions``.

A frozen list (Nova stopped loading extensions in 16.0.0 Pike and kept this data for old
clients); read by the extensions handlers. Every record shares the namespace, ``updated``
stamp and empty links of :mod:`openkeel.api.resources.extensions.views`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Extension:
    """One legacy extension: its alias (the id in URLs), name and description."""

    alias: str
    name: str
    description: str


# Sorted by alias, as Nova lists them.
EXTENSIONS: tuple[Extension, ...] = (
    Extension("NMN", "Multinic", "Multiple network support."),
    Extension("OS-DCF", "DiskConfig", "Disk Management Extension."),
    Extension("OS-EXT-AZ", "ExtendedAvailabilityZone", "Extended Availability Zone support."),
    Extension("OS-EXT-IMG-SIZE", "ImageSize", "Adds image size to image listings."),
    Extension("OS-EXT-IPS", "ExtendedIps", "Adds type parameter to the ip list."),
    Extension("OS-EXT-IPS-MAC", "ExtendedIpsMac", "Adds mac address parameter to the ip list."),
    Extension("OS-EXT-SRV-ATTR", "ExtendedServerAttributes", "Extended Server Attributes support."),
    Extension("OS-EXT-STS", "ExtendedStatus", "Extended Status support."),
    Extension(
        "OS-FLV-DISABLED", "FlavorDisabled", "Support to show the disabled status of a flavor."
    ),
    Extension("OS-FLV-EXT-DATA", "FlavorExtraData", "Provide additional data for flavors."),
    Extension("OS-SCH-HNT", "SchedulerHints", "Pass arbitrary key/value pairs to the scheduler."),
    Extension("OS-SRV-USG", "ServerUsage", "Adds launched_at and terminated_at on Servers."),
    Extension("os-access-ips", "AccessIPs", "Access IPs support."),
    Extension(
        "os-admin-actions",
        "AdminActions",
        "Enable admin-only server actions\n\n    Actions include: resetNetwork, injectNetworkInfo, os-resetState\n    ",
    ),
    Extension("os-admin-password", "AdminPassword", "Admin password management support."),
    Extension("os-agents", "Agents", "Agents support."),
    Extension("os-aggregates", "Aggregates", "Admin-only aggregate administration."),
    Extension(
        "os-assisted-volume-snapshots", "AssistedVolumeSnapshots", "Assisted volume snapshots."
    ),
    Extension("os-attach-interfaces", "AttachInterfaces", "Attach interface support."),
    Extension(
        "os-availability-zone",
        "AvailabilityZone",
        "1. Add availability_zone to the Create Server API.\n       2. Add availability zones describing.\n    ",
    ),
    Extension(
        "os-baremetal-ext-status",
        "BareMetalExtStatus",
        "Add extended status in Baremetal Nodes v2 API.",
    ),
    Extension("os-baremetal-nodes", "BareMetalNodes", "Admin-only bare-metal node administration."),
    Extension(
        "os-block-device-mapping", "BlockDeviceMapping", "Block device mapping boot support."
    ),
    Extension(
        "os-block-device-mapping-v2-boot",
        "BlockDeviceMappingV2Boot",
        "Allow boot with the new BDM data format.",
    ),
    Extension(
        "os-cell-capacities", "CellCapacities", "Adding functionality to get cell capacities."
    ),
    Extension(
        "os-cells",
        "Cells",
        "Enables cells-related functionality such as adding neighbor cells,\n    listing neighbor cells, and getting the capabilities of the local cell.\n    ",
    ),
    Extension("os-certificates", "Certificates", "Certificates support."),
    Extension(
        "os-cloudpipe",
        "Cloudpipe",
        "Adds actions to create cloudpipe instances.\n\n    When running with the Vlan network mode, you need a mechanism to route\n    from the public Internet to your vlans.  This mechanism is known as a\n    cloudpipe.\n\n    At the time of creating this class, only OpenVPN is supported.  Support for\n    a SSH Bastion host is forthcoming.\n    ",
    ),
    Extension(
        "os-cloudpipe-update",
        "CloudpipeUpdate",
        "Adds the ability to set the vpn ip/port for cloudpipe instances.",
    ),
    Extension("os-config-drive", "ConfigDrive", "Config Drive Extension."),
    Extension(
        "os-console-auth-tokens", "ConsoleAuthTokens", "Console token authentication support."
    ),
    Extension(
        "os-console-output", "ConsoleOutput", "Console log output support, with tailing ability."
    ),
    Extension("os-consoles", "Consoles", "Interactive Console support."),
    Extension("os-create-backup", "CreateBackup", "Create a backup of a server."),
    Extension(
        "os-create-server-ext", "Createserverext", "Extended support to the Create Server v1.1 API."
    ),
    Extension("os-deferred-delete", "DeferredDelete", "Instance deferred delete."),
    Extension("os-evacuate", "Evacuate", "Enables server evacuation."),
    Extension(
        "os-extended-evacuate-find-host",
        "ExtendedEvacuateFindHost",
        "Enables server evacuation without target host. Scheduler will select one to target.",
    ),
    Extension(
        "os-extended-floating-ips",
        "ExtendedFloatingIps",
        "Adds optional fixed_address to the add floating IP command.",
    ),
    Extension("os-extended-hypervisors", "ExtendedHypervisors", "Extended hypervisors support."),
    Extension("os-extended-networks", "ExtendedNetworks", "Adds additional fields to networks."),
    Extension(
        "os-extended-quotas",
        "ExtendedQuotas",
        "Adds ability for admins to delete quota and optionally force the update Quota command.",
    ),
    Extension(
        "os-extended-rescue-with-image",
        "ExtendedRescueWithImage",
        "Allow the user to specify the image to use for rescue.",
    ),
    Extension("os-extended-services", "ExtendedServices", "Extended services support."),
    Extension(
        "os-extended-services-delete",
        "ExtendedServicesDelete",
        "Extended services deletion support.",
    ),
    Extension("os-extended-status", "ExtendedStatus", "Extended Status support."),
    Extension("os-extended-volumes", "ExtendedVolumes", "Extended Volumes support."),
    Extension("os-fixed-ips", "FixedIPs", "Fixed IPs support."),
    Extension("os-flavor-access", "FlavorAccess", "Flavor access support."),
    Extension("os-flavor-extra-specs", "FlavorExtraSpecs", "Flavors extra specs support."),
    Extension("os-flavor-manage", "FlavorManage", "Flavor create/delete API support."),
    Extension("os-flavor-rxtx", "FlavorRxtx", "Support to show the rxtx status of a flavor."),
    Extension("os-flavor-swap", "FlavorSwap", "Support to show the swap status of a flavor."),
    Extension("os-floating-ip-dns", "FloatingIpDns", "Floating IP DNS support."),
    Extension("os-floating-ip-pools", "FloatingIpPools", "Floating IPs support."),
    Extension("os-floating-ips", "FloatingIps", "Floating IPs support."),
    Extension("os-floating-ips-bulk", "FloatingIpsBulk", "Bulk handling of Floating IPs."),
    Extension("os-fping", "Fping", "Fping Management Extension."),
    Extension(
        "os-hide-server-addresses",
        "HideServerAddresses",
        "Support hiding server addresses in certain states.",
    ),
    Extension("os-hosts", "Hosts", "Admin-only host administration."),
    Extension("os-hypervisor-status", "HypervisorStatus", "Show hypervisor status."),
    Extension("os-hypervisors", "Hypervisors", "Admin-only hypervisor administration."),
    Extension(
        "os-instance-actions",
        "InstanceActions",
        "View a log of actions and events taken on an instance.",
    ),
    Extension(
        "os-instance_usage_audit_log", "OSInstanceUsageAuditLog", "Admin-only Task Log Monitoring."
    ),
    Extension("os-keypairs", "Keypairs", "Keypair Support."),
    Extension("os-lock-server", "LockServer", "Enable lock/unlock server actions."),
    Extension(
        "os-migrate-server", "MigrateServer", "Enable migrate and live-migrate server actions."
    ),
    Extension("os-migrations", "Migrations", "Provide data on migrations."),
    Extension(
        "os-multiple-create",
        "MultipleCreate",
        "Allow multiple create in the Create Server v2.1 API.",
    ),
    Extension("os-networks", "Networks", "Admin-only Network Management Extension."),
    Extension("os-networks-associate", "NetworkAssociationSupport", "Network association support."),
    Extension("os-pause-server", "PauseServer", "Enable pause/unpause server actions."),
    Extension("os-personality", "Personality", "Personality support."),
    Extension(
        "os-preserve-ephemeral-rebuild",
        "PreserveEphemeralOnRebuild",
        "Allow preservation of the ephemeral partition on rebuild.",
    ),
    Extension("os-quota-class-sets", "QuotaClasses", "Quota classes management support."),
    Extension("os-quota-sets", "Quotas", "Quotas management support."),
    Extension("os-rescue", "Rescue", "Instance rescue mode."),
    Extension(
        "os-security-group-default-rules",
        "SecurityGroupDefaultRules",
        "Default rules for security group support.",
    ),
    Extension("os-security-groups", "SecurityGroups", "Security group support."),
    Extension(
        "os-server-diagnostics",
        "ServerDiagnostics",
        "Allow Admins to view server diagnostics through server action.",
    ),
    Extension(
        "os-server-external-events", "ServerExternalEvents", "Server External Event Triggers."
    ),
    Extension(
        "os-server-group-quotas", "ServerGroupQuotas", "Adds quota support to server groups."
    ),
    Extension("os-server-groups", "ServerGroups", "Server group support."),
    Extension(
        "os-server-list-multi-status",
        "ServerListMultiStatus",
        "Allow to filter the servers by a set of status values.",
    ),
    Extension("os-server-password", "ServerPassword", "Server password support."),
    Extension("os-server-sort-keys", "ServerSortKeys", "Add sorting support in get Server v2 API."),
    Extension(
        "os-server-start-stop", "ServerStartStop", "Start/Stop instance compute API support."
    ),
    Extension("os-services", "Services", "Services support."),
    Extension("os-shelve", "Shelve", "Instance shelve mode."),
    Extension("os-simple-tenant-usage", "SimpleTenantUsage", "Simple tenant usage extension."),
    Extension("os-suspend-server", "SuspendServer", "Enable suspend/resume server actions."),
    Extension(
        "os-tenant-networks", "OSTenantNetworks", "Tenant-based Network Management Extension."
    ),
    Extension(
        "os-used-limits", "UsedLimits", "Provide data on limited resources that are being used."
    ),
    Extension(
        "os-used-limits-for-admin",
        "UsedLimitsForAdmin",
        "Provide data to admin on limited resources used by other tenants.",
    ),
    Extension("os-user-data", "UserData", "Add user_data to the Create Server API."),
    Extension("os-user-quotas", "UserQuotas", "Project user quota support."),
    Extension("os-virtual-interfaces", "VirtualInterfaces", "Virtual interface support."),
    Extension(
        "os-volume-attachment-update",
        "VolumeAttachmentUpdate",
        "Support for updating a volume attachment.",
    ),
    Extension("os-volumes", "Volumes", "Volumes support."),
)

# The legacy /v2 mount lists one more record (the old virtual-interface network id).
LEGACY_V2_ONLY = Extension(
    "OS-EXT-VIF-NET", "ExtendedVIFNet", "Adds network id parameter to the virtual interface list."
)

LEGACY_V2_EXTENSIONS: tuple[Extension, ...] = tuple(
    sorted((*EXTENSIONS, LEGACY_V2_ONLY), key=lambda ext: ext.alias)
)
