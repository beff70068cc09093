"""The scheduler role: picks compute nodes for instances (Nova's nova-scheduler).

``endpoint`` serves RPC topic ``scheduler``; ``selection`` runs one request: Placement
allocation candidates -> host states -> filters -> weighers -> claim in Placement.
"""
