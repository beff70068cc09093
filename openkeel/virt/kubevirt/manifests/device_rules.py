"""Extra-spec rules for firmware, machine and devices (see ``resolution.resolve``).

Watchdog, RNG, video, pointer, serial console, TPM, sound, buses and NIC model, UEFI/secure
boot, machine type, architecture, memory encryption, PCI/vGPU passthrough.
"""

from __future__ import annotations

import re

from openkeel.domain.errors import Invalid
from openkeel.virt.kubevirt.manifests.extra_specs import (
    FLAVOR,
    Draft,
    Picked,
    Rule,
    Treatment,
    truthy,
)


def firmware(d: Draft) -> None:
    fw = d.pick(None, "hw_firmware_type")
    flavor_sb, image_sb = d.pick("os:secure_boot", None), d.pick(None, "os_secure_boot")
    if flavor_sb and image_sb and {flavor_sb.value, image_sb.value} == {"required", "disabled"}:
        raise Invalid(
            "Conflicting values for secure_boot found in the flavor "
            f"({flavor_sb.value}) and the image ({image_sb.value})."
        )
    secure = flavor_sb or image_sb
    want_secure = secure is not None and secure.value in ("required", "optional")
    if fw is not None and fw.value not in ("uefi", "bios"):
        raise d.refuse(fw, "KubeVirt boots with BIOS or UEFI only")
    d.uefi = fw is not None and fw.value == "uefi"
    if want_secure and not d.uefi:
        assert secure is not None
        raise d.refuse(secure, "secure boot requires hw_firmware_type=uefi")
    if fw is None:
        if secure is not None:
            d.record_both("os:secure_boot", "os_secure_boot", Treatment.APPLIED)
        return
    if d.uefi:
        d.put("firmware.bootloader.efi", {"secureBoot": want_secure})
        if want_secure:
            d.put("features.smm", {"enabled": True})
    else:
        d.put("firmware.bootloader.bios", {})
    d.record(fw, Treatment.APPLIED)
    if secure is not None:
        note = (
            "optional: enabled (KubeVirt always supports it)" if secure.value == "optional" else ""
        )
        treatment = Treatment.EMULATED if secure.value == "optional" else Treatment.APPLIED
        d.record_both("os:secure_boot", "os_secure_boot", treatment, note)


_MACHINE_OK = re.compile(r"^(q35|pc-q35-.*|virt(-.*)?|s390-ccw-virtio(-.*)?)$")


def machine_type(d: Draft) -> None:
    picked = d.pick(None, "hw_machine_type")
    if picked is None:
        return
    if not _MACHINE_OK.match(picked.value):
        raise d.refuse(picked, "KubeVirt supports q35 machine types on x86 (no i440fx/pc)")
    d.put("machine.type", picked.value)
    d.record(picked, Treatment.APPLIED)


_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "s390x": "s390x"}


def architecture(d: Draft) -> None:
    picked = d.pick(None, "hw_architecture")
    if picked is None:
        return
    if picked.value not in _ARCH:
        raise d.refuse(picked, "KubeVirt runs amd64, arm64 and s390x guests")
    d.put("architecture", _ARCH[picked.value], root="template")
    d.record(picked, Treatment.APPLIED)


_WATCHDOG = {"reset": "reset", "poweroff": "poweroff"}


def watchdog(d: Draft) -> None:
    picked = d.pick("hw:watchdog_action", "hw_watchdog_action")
    if picked is None:
        return
    if picked.value not in ("disabled", "reset", "poweroff", "pause", "none"):
        raise Invalid(f"Provided watchdog action ({picked.value}) is not supported.")
    if picked.value in ("pause", "none"):
        raise d.refuse(picked, "the i6300esb watchdog can only reset, power off or shut down")
    if picked.value != "disabled":
        action = _WATCHDOG[picked.value]
        d.put("devices.watchdog", {"name": "watchdog0", "i6300esb": {"action": action}})
    d.record_both("hw:watchdog_action", "hw_watchdog_action", Treatment.APPLIED)


def rng(d: Draft) -> None:
    model = d.pick(None, "hw_rng_model")
    allowed = d.pick("hw_rng:allowed", None)
    if allowed is not None:
        d.record(allowed, Treatment.APPLIED)
    if model is None:
        return
    if allowed is not None and not truthy(allowed.value):
        d.record(model, Treatment.IGNORED, "the flavor does not allow an RNG (hw_rng:allowed)")
        return
    if model.value != "virtio":
        raise d.refuse(model, "KubeVirt provides a virtio RNG only")
    d.put("devices.rng", {})
    d.record(model, Treatment.APPLIED)


_VIDEO = ("virtio", "vga", "bochs", "cirrus", "ramfb")


def video(d: Draft) -> None:
    picked = d.pick(None, "hw_video_model")
    if picked is None:
        return
    if picked.value == "none":
        d.put("devices.autoattachGraphicsDevice", False)
    elif picked.value in _VIDEO:
        d.put("devices.video", {"type": picked.value})
    else:
        raise d.refuse(picked, f"KubeVirt video types are {', '.join(_VIDEO)} or none")
    d.record(picked, Treatment.APPLIED)


def pointer(d: Draft) -> None:
    picked = d.pick(None, "hw_pointer_model")
    bus = d.pick(None, "hw_input_bus")
    if bus is not None and bus.value not in ("usb", "virtio"):
        raise d.refuse(bus, "KubeVirt input devices use the usb or virtio bus")
    if picked is None:
        if bus is not None:
            d.record(bus, Treatment.APPLIED)
        return
    if picked.value == "usbtablet":
        tablet_bus = bus.value if bus is not None else "usb"
        d.append("devices.inputs", {"type": "tablet", "bus": tablet_bus, "name": "tablet0"})
    elif picked.value != "ps2mouse":
        raise d.refuse(picked, "KubeVirt emulates a tablet or the default PS/2 mouse")
    d.record(picked, Treatment.APPLIED)
    if bus is not None:
        d.record(bus, Treatment.APPLIED)


def serial_console(d: Draft) -> None:
    d.put("devices.logSerialConsole", d.settings.log_serial_console)
    flavor, image = d.pick("hw:serial_port_count", None), d.pick(None, "hw_serial_port_count")
    for picked in (flavor, image):
        if picked is not None and not picked.value.isdigit():
            raise Invalid(
                "Number of serial ports specified in flavor is invalid: expected a number, "
                f"got {picked.value}"
            )
    if flavor and image and int(image.value) > int(flavor.value):
        raise Invalid(
            "Forbidden to exceed flavor value of number of serial ports passed in image meta."
        )
    chosen = image or flavor
    if chosen is None:
        return
    if int(chosen.value) > 1:
        raise d.refuse(chosen, "KubeVirt provides a single serial console")
    if int(chosen.value) == 0:
        d.put("devices.autoattachSerialConsole", False)
    d.record_both("hw:serial_port_count", "hw_serial_port_count", Treatment.APPLIED)


def tpm(d: Draft) -> None:
    version = d.pick("hw:tpm_version", "hw_tpm_version")
    model = d.pick("hw:tpm_model", "hw_tpm_model")
    if version is None:
        return
    if version.value != "2.0":
        raise d.refuse(version, "KubeVirt emulates TPM 2.0 only")
    d.put("devices.tpm", {"persistent": True})
    d.record_both("hw:tpm_version", "hw_tpm_version", Treatment.APPLIED)
    if model is not None:
        d.record_both(
            "hw:tpm_model", "hw_tpm_model", Treatment.EMULATED, "KubeVirt chooses the TPM model"
        )


def sound(d: Draft) -> None:
    picked = d.pick("hw:sound_model", "hw_sound_model")
    if picked is None:
        return
    if picked.value not in ("ich9", "ac97"):
        raise d.refuse(picked, "KubeVirt emulates ich9 or ac97 sound cards only")
    d.put("devices.sound", {"name": "sound0", "model": picked.value})
    d.record_both("hw:sound_model", "hw_sound_model", Treatment.APPLIED)


_DISK_BUS = {"virtio": "virtio", "sata": "sata", "scsi": "scsi", "usb": "usb", "ide": "sata"}
_CDROM_BUS = {"sata": "sata", "scsi": "scsi", "virtio": "virtio", "ide": "sata"}
_VIF_MODELS = ("virtio", "e1000", "e1000e", "igb", "ne2k_pci", "pcnet", "rtl8139")


def buses(d: Draft) -> None:
    for key, table, attr in (
        ("hw_disk_bus", _DISK_BUS, "disk_bus"),
        ("hw_cdrom_bus", _CDROM_BUS, "cdrom_bus"),
    ):
        picked = d.pick(None, key)
        if picked is None:
            continue
        if picked.value not in table:
            raise d.refuse(picked, f"KubeVirt buses are {', '.join(sorted(set(table.values())))}")
        setattr(d, attr, table[picked.value])
        ide = picked.value == "ide"
        d.record(picked, Treatment.EMULATED if ide else Treatment.APPLIED, "sata" if ide else "")
    scsi = d.pick(None, "hw_scsi_model")
    if scsi is not None:
        if scsi.value != "virtio-scsi":
            raise d.refuse(scsi, "KubeVirt's scsi bus is virtio-scsi")
        d.record(scsi, Treatment.APPLIED)
    vif = d.pick(None, "hw_vif_model")
    if vif is not None:
        if vif.value not in _VIF_MODELS:
            raise d.refuse(vif, f"KubeVirt NIC models are {', '.join(_VIF_MODELS)}")
        d.vif_model = vif.value
        d.record(vif, Treatment.APPLIED)
    multiqueue = d.pick("hw:vif_multiqueue_enabled", "hw_vif_multiqueue_enabled")
    if multiqueue is not None:
        d.put("devices.networkInterfaceMultiqueue", truthy(multiqueue.value))
        d.record_both("hw:vif_multiqueue_enabled", "hw_vif_multiqueue_enabled", Treatment.APPLIED)


def guest_features(d: Draft) -> None:
    hide = d.pick("hw:hide_hypervisor_id", "img_hide_hypervisor_id") or d.pick(
        "hide_hypervisor_id", None
    )
    if hide is not None:
        if truthy(hide.value):
            d.put("features.kvm", {"hidden": True})
        d.record(hide, Treatment.APPLIED)
    hpet = d.pick(None, "hw_time_hpet")
    if hpet is not None:
        d.put("clock.timer.hpet", {"present": truthy(hpet.value)})
        d.record(hpet, Treatment.APPLIED)
    os_type = d.pick(None, "os_type")
    if os_type is not None and os_type.value == "windows":
        hyperv = {"relaxed": {}, "vapic": {}, "spinlocks": {"spinlocks": 8191}}
        d.put("features.hyperv", hyperv)
        d.record(os_type, Treatment.EMULATED, "Hyper-V enlightenments; the clock stays UTC")
    drive = d.pick(None, "img_config_drive")
    if drive is not None:
        d.config_drive_forced = drive.value == "mandatory"
        d.record(drive, Treatment.APPLIED)


def mem_encryption(d: Draft) -> None:
    picked = d.pick("hw:mem_encryption", "hw_mem_encryption")
    if picked is None or not truthy(picked.value):
        if picked is not None:
            d.record_both("hw:mem_encryption", "hw_mem_encryption", Treatment.APPLIED)
        return
    if not d.uefi:
        raise d.refuse(picked, "memory encryption requires hw_firmware_type=uefi")
    model = d.pick("hw:mem_encryption_model", "hw_mem_encryption_model")
    sev: dict[str, object] = {}
    if model is not None:
        if model.value not in ("amd-sev", "amd-sev-es"):
            raise d.refuse(model, "KubeVirt supports amd-sev and amd-sev-es")
        if model.value == "amd-sev-es":
            sev["policy"] = {"encryptedState": True}
        d.record_both("hw:mem_encryption_model", "hw_mem_encryption_model", Treatment.APPLIED)
    d.put("launchSecurity.sev", sev)
    d.record_both("hw:mem_encryption", "hw_mem_encryption", Treatment.APPLIED)


def pci_devices(d: Draft) -> None:
    alias = d.pick("pci_passthrough:alias", None)
    if alias is not None:
        for index, item in enumerate(alias.value.split(",")):
            name, _, count = item.strip().partition(":")
            resource = d.settings.pci_alias_resources.get(name)
            if resource is None:
                raise d.refuse(alias, f"no [kubevirt] pci_alias_resources entry for '{name}'")
            for n in range(int(count or "1")):
                device = {"name": f"pci-{index}-{n}", "deviceName": resource}
                d.append("devices.hostDevices", device)
        d.record(alias, Treatment.APPLIED)
    for key in sorted(k for k in d.specs if re.match(r"^resources\d*:VGPU$", k)):
        picked = Picked(key, d.specs[key], FLAVOR)
        if d.settings.vgpu_resource_name is None:
            raise d.refuse(picked, "no [kubevirt] vgpu_resource_name configured")
        for n in range(int(picked.value)):
            gpu = {"name": f"vgpu{n}", "deviceName": d.settings.vgpu_resource_name}
            d.append("devices.gpus", gpu)
        d.record(picked, Treatment.APPLIED)


RULES: tuple[Rule, ...] = (
    firmware,
    machine_type,
    architecture,
    watchdog,
    rng,
    video,
    pointer,
    serial_console,
    tpm,
    sound,
    buses,
    guest_features,
    mem_encryption,
    pci_devices,
)
