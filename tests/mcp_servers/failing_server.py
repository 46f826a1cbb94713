"""An MCP server that fails to start: it prints its secret to stderr and exits."""

import os
import sys

print(f"cannot start: bad credentials {os.environ.get('BROKEN_SECRET', '')}", file=sys.stderr, flush=True)
sys.exit(3)
