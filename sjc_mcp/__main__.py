import sys

from sjc_mcp.cli import main

sys.exit(main())
