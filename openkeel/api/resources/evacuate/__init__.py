"""The ``evacuate`` server action (Nova's evacuate controller)."""
