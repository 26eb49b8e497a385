"""The table: webui.engine runs it without Flask, webui.app serves it over HTTP with the tablet page,
webui.cli wires the two to the settings and the hardware."""
