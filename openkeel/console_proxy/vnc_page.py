"""The noVNC page the proxy serves when its web directory has no page of that name (the
``@novnc/novnc`` npm package ships only ``core/`` and ``vendor/``; without noVNC's library in
``[DEFAULT] web`` the page loads but cannot connect).

Like noVNC's vnc_lite.html: it connects ``core/rfb.js`` to the websocket path given in its
``path`` query parameter (where the console token rides) and shows the state in ``#status``.
"""

from __future__ import annotations

PAGE = b"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>OpenKeel console (noVNC)</title>
<style>
body { margin: 0; background: #282828; color: #fff; font: 14px sans-serif; }
#status { padding: 4px 8px; }
#screen { width: 100%; height: calc(100vh - 28px); }
</style>
</head>
<body>
<div id="status">Loading</div>
<div id="screen"></div>
<script type="module">
import RFB from "./core/rfb.js";

const status = document.getElementById("status");
const query = new URLSearchParams(window.location.search);
const scheme = window.location.protocol === "https:" ? "wss" : "ws";
const path = (query.get("path") || "").replace(/^\\//, "");
const url = `${scheme}://${window.location.host}/${path}`;
status.textContent = "Connecting";
const rfb = new RFB(document.getElementById("screen"), url);
rfb.scaleViewport = true;
rfb.addEventListener("connect", () => { status.textContent = "Connected"; });
rfb.addEventListener("disconnect", (e) => {
  status.textContent = e.detail.clean ? "Disconnected" : "Something went wrong";
});
rfb.addEventListener("desktopname", (e) => { document.title = e.detail.name; });
</script>
</body>
</html>
"""

# The names noVNC's own pages go by (Nova's default URL names vnc_auto.html).
PAGE_NAMES = frozenset({"/vnc_lite.html", "/vnc_auto.html"})
