"""The console proxy roles (``openkeel novncproxy``, ``openkeel serialproxy``): a websocket
per user relayed to a guest's VNC server or serial line once its console token checks out."""
