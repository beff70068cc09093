"""openkeel.domain.keypairs: fingerprints and validation match Nova's crypto module (oracle),
and generated keys are usable and fingerprinted consistently."""

from __future__ import annotations

import base64
import datetime
import warnings
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from openkeel.domain import keypairs
from openkeel.domain.errors import Invalid

# Nova's api-samples import key and the fingerprint its sample response shows.
SAMPLE_KEY = (
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDx8nkQv/zgGgB4rMYmIf+6A4l6Rr+o/6lHBQdW5aYd44bd8JttDCE"
    "/F/pNRr0lRE+PiqSPO8nDPHw0010JeMH9gYgnnFlyY3/OcJ02RhIPyyxYpv9FhY+2YiUkpwFOcLImyrxEsYXpD/0d3"
    "ac30bNH6Sw9JD9UZHYcpSxsIbECHw== Generated-by-Nova"
)
SAMPLE_FINGERPRINT = "1e:2c:9b:56:79:4b:45:77:f9:ca:7a:98:2c:b0:d5:3c"


@pytest.fixture(scope="module")
def nova_crypto() -> Any:
    """Nova's crypto module (the oracle); importing nova warns about eventlet."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from nova import crypto  # type: ignore[import-untyped]

    return crypto


def _self_signed_pem() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "someone")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def test_sample_fingerprint_is_novas() -> None:
    assert keypairs.ssh_fingerprint(SAMPLE_KEY) == SAMPLE_FINGERPRINT
    assert keypairs.fingerprint(SAMPLE_KEY, "ssh") == SAMPLE_FINGERPRINT


@pytest.mark.oracle
def test_fingerprints_equal_novas_for_several_key_kinds(nova_crypto: Any) -> None:
    crypto = nova_crypto
    ed = ed25519.Ed25519PrivateKey.generate().public_key()
    ecdsa = ec.generate_private_key(ec.SECP384R1()).public_key()
    for public in (ed, ecdsa):
        line = public.public_bytes(
            serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
        ).decode()
        assert keypairs.ssh_fingerprint(line) == crypto.generate_fingerprint(line)
    pem = _self_signed_pem()
    assert keypairs.x509_fingerprint(pem) == crypto.generate_x509_fingerprint(pem)


@pytest.mark.parametrize(
    "bad",
    ["", "ssh-rsa", "ssh-rsa AAAA", "not a key at all", "ssh-rsa !!!notbase64 x", SAMPLE_KEY[:60]],
)
def test_invalid_ssh_key_is_novas_400(bad: str) -> None:
    with pytest.raises(Invalid) as caught:
        keypairs.ssh_fingerprint(bad)
    assert caught.value.code == 400
    assert caught.value.message == "Keypair data is invalid: failed to generate fingerprint"


@pytest.mark.oracle
def test_invalid_certificate_message_equals_novas(nova_crypto: Any) -> None:
    crypto = nova_crypto
    from nova import exception

    for bad in (
        "garbage",
        SAMPLE_KEY,
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----",
    ):
        with pytest.raises(exception.InvalidKeypair) as nova_error:
            crypto.generate_x509_fingerprint(bad)
        with pytest.raises(Invalid) as ours:
            keypairs.x509_fingerprint(bad)
        assert ours.value.message == nova_error.value.format_message()


def test_x509_fingerprint_is_colon_sha1() -> None:
    pem = _self_signed_pem()
    cert = x509.load_pem_x509_certificate(pem.encode())
    digest = cert.fingerprint(hashes.SHA1()).hex()
    expected = ":".join(digest[i : i + 2] for i in range(0, 40, 2))
    assert keypairs.x509_fingerprint(pem) == expected
    assert keypairs.fingerprint(pem, "x509") == expected


def test_generated_ssh_key_is_rsa_2048_in_novas_format() -> None:
    material = keypairs.generate("ssh", "user")
    assert material.private_key is not None
    assert material.private_key.startswith("-----BEGIN RSA PRIVATE KEY-----\n")
    assert material.private_key.endswith("-----END RSA PRIVATE KEY-----\n")
    kind, blob, comment = material.public_key.split(" ")
    assert (kind, comment) == ("ssh-rsa", "Generated-by-Nova")
    private = serialization.load_pem_private_key(material.private_key.encode(), None)
    assert isinstance(private, rsa.RSAPrivateKey)
    assert private.key_size == 2048
    assert private.public_key().public_numbers().e == 65537
    derived = private.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    assert derived.decode() == f"{kind} {blob}"
    assert material.fingerprint == keypairs.ssh_fingerprint(material.public_key)


def test_generated_x509_is_a_winrm_client_certificate() -> None:
    material = keypairs.generate("x509", "alice")
    cert = x509.load_pem_x509_certificate(material.public_key.encode())
    cn = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    assert cn == "alice" and cert.issuer == cert.subject
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    (upn,) = san.get_values_for_type(x509.OtherName)
    assert upn.type_id == keypairs.UPN_OID
    assert upn.value == b"\x0c\x0falice@localhost"
    assert material.fingerprint == keypairs.x509_fingerprint(material.public_key)
    assert material.private_key is not None
    bundle = pkcs12.load_pkcs12(base64.b64decode(material.private_key), None)
    assert bundle.cert is not None and bundle.cert.certificate == cert
    assert isinstance(bundle.key, rsa.RSAPrivateKey) and bundle.key.key_size == 2048


def test_der_utf8_string_short_and_long_form() -> None:
    assert keypairs.der_utf8_string("ab") == b"\x0c\x02ab"
    assert keypairs.der_utf8_string("é" * 100) == b"\x0c\x81\xc8" + "é".encode() * 100
    assert keypairs.der_utf8_string("x" * 300) == b"\x0c\x82\x01\x2c" + b"x" * 300
