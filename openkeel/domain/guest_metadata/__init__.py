"""What a guest learns about itself: Nova's OpenStack and EC2 metadata documents.

Pure: built from a :class:`~openkeel.domain.guest_metadata.record.GuestRecord` (what the cell DB
and the API DB say about one server). The metadata service (``openkeel.metadata``) answers
paths with :class:`~openkeel.domain.guest_metadata.tree.MetadataTree`; the compute role builds
the config drive's files from the same tree (decision 0058).
"""
