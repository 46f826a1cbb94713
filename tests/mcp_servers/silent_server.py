"""An MCP server that starts and never answers (for timeouts)."""

import time

time.sleep(600)
