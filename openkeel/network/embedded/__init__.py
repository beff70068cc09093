"""The embedded network service (a Neutron v2.0 subset, decision 0041): Neutron's rules over
the rows of :mod:`openkeel.db.network_store`. The network API role serves it over HTTP; the
flat network adapter allocates servers' ports through it."""
