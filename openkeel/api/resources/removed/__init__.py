"""APIs Nova removed but still routes: 410 Gone at every microversion (plus os-getRDPConsole)."""
