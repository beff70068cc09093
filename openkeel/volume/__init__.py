"""Block storage: the volume adapter Nova's side uses (:mod:`openkeel.volume.adapter`) and the
embedded volume service of the all-in-one (:mod:`openkeel.volume.embedded`)."""
