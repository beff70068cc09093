"""Outbound REST adapters (Placement, Glance, ...), each with its own typed errors."""
