"""The os-keypairs resource: ssh and x509 key pairs of a user."""
