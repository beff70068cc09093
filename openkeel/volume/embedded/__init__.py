"""The embedded volume service (a Cinder v3 subset, decision 0057): Cinder's rules over the
rows of :mod:`openkeel.db.volume_store`. The volume API role serves it over HTTP; the embedded
volume adapter gives Nova's side the same service in process."""
