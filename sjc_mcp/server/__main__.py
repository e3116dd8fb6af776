import sys

from sjc_mcp.server import main

sys.exit(main())
