"""Key pairs: the entity, public key checks, fingerprints and key generation.

Pure functions over the ``cryptography`` package, called by the key pair use case
(``openkeel.api.usecases.keypairs``). Fingerprints follow Nova byte for byte: MD5 of the
ssh key blob and SHA-1 of the DER certificate, both as colon-separated lowercase hex.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import secrets
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from openkeel.domain.errors import Invalid

SSH = "ssh"
X509 = "x509"
KEY_TYPES = (SSH, X509)
RSA_BITS = 2048
PUBLIC_EXPONENT = 65537
# Microsoft's User Principal Name, which Windows guests map to a local account.
UPN_OID = x509.ObjectIdentifier("1.3.6.1.4.1.311.20.2.3")
CERT_VALID_DAYS = 3650


@dataclass(frozen=True)
class KeyPair:
    """One stored key pair (a row of the API database's ``key_pairs``)."""

    id: int
    name: str
    user_id: str
    fingerprint: str | None
    public_key: str | None
    type: str
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None = None


@dataclass(frozen=True)
class KeyMaterial:
    """A public key (or certificate) with its fingerprint; ``private_key`` only when
    generated here."""

    public_key: str
    fingerprint: str
    private_key: str | None = None


class InvalidKeypair(Invalid):
    """The public key or certificate cannot be used (400, Nova's ``InvalidKeypair``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"Keypair data is invalid: {reason}")


def _colon_hex(digest_hex: str) -> str:
    return ":".join(digest_hex[i : i + 2] for i in range(0, len(digest_hex), 2))


def ssh_fingerprint(public_key: str) -> str:
    """MD5 fingerprint of an OpenSSH public key line; InvalidKeypair if it does not parse."""
    try:
        serialization.load_ssh_public_key(public_key.encode("utf-8"))
        # Nova hashes the second space-separated field, decoded leniently.
        blob = base64.b64decode(public_key.split(" ")[1])
    except Exception as exc:  # any parse failure is the same 400 in Nova
        raise InvalidKeypair("failed to generate fingerprint") from exc
    return _colon_hex(hashlib.md5(blob, usedforsecurity=False).hexdigest())


def x509_fingerprint(pem: str) -> str:
    """SHA-1 fingerprint of a PEM certificate; InvalidKeypair naming the parse error."""
    try:
        cert = x509.load_pem_x509_certificate(pem.encode("utf-8"))
        digest = cert.fingerprint(hashes.SHA1())
    except (ValueError, TypeError, binascii.Error) as exc:
        raise InvalidKeypair(f"failed to generate X509 fingerprint. Error message: {exc}") from exc
    return _colon_hex(digest.hex())


def fingerprint(public_key: str, key_type: str) -> str:
    """The fingerprint Nova stores for an imported key of ``key_type``."""
    if key_type == X509:
        return x509_fingerprint(public_key)
    return ssh_fingerprint(public_key)


def generate(key_type: str, user_id: str) -> KeyMaterial:
    """A new key pair of ``key_type``: RSA for ssh, a self-signed client cert for x509."""
    if key_type == X509:
        return generate_x509(user_id)
    return generate_ssh()


def generate_ssh(bits: int = RSA_BITS) -> KeyMaterial:
    """An RSA key: PEM private key (traditional OpenSSL form) and an OpenSSH public line."""
    key = rsa.generate_private_key(public_exponent=PUBLIC_EXPONENT, key_size=bits)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode("ascii")
    openssh = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    public = f"{openssh.decode('ascii')} Generated-by-Nova"
    return KeyMaterial(public, ssh_fingerprint(public), private)


def der_utf8_string(text: str) -> bytes:
    """``text`` as a DER UTF8String (tag, definite length, bytes)."""
    data = text.encode("utf-8")
    size = len(data)
    if size < 0x80:
        length = bytes([size])
    else:
        raw = size.to_bytes((size.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return b"\x0c" + length + data


def generate_x509(user_id: str, bits: int = RSA_BITS) -> KeyMaterial:
    """A self-signed WinRM client certificate for ``user_id``; the private key is a
    base64 PKCS#12 bundle of key and certificate."""
    key = rsa.generate_private_key(public_exponent=PUBLIC_EXPONENT, key_size=bits)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, user_id)])
    now = datetime.datetime.now(datetime.UTC)
    upn = x509.OtherName(UPN_OID, der_utf8_string(f"{user_id}@localhost"))
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(int.from_bytes(secrets.token_bytes(16), "big") >> 1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=CERT_VALID_DAYS))
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName([upn]), critical=False)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM).decode("ascii")
    bundle = pkcs12.serialize_key_and_certificates(
        None, key, cert, None, serialization.NoEncryption()
    )
    return KeyMaterial(pem, x509_fingerprint(pem), base64.b64encode(bundle).decode("ascii"))
