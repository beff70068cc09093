"""The embedded volume service's HTTP face: a Cinder v3 subset served by the all-in-one under
``/volume`` (decision 0057)."""
