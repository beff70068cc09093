"""The embedded identity service: a Keystone v3 subset served by the all-in-one under
``/identity`` (decision 0040)."""
