#!/usr/bin/env python3
"""A broken stand-in for ``sjc-hook openclaw``, for the plugin's fault tests: what it does with a summary
is read from the file ``$SJC_STUB_CONTROL`` at each call (``hang``, ``exit``, ``garbage``); the check at
the start of a compaction is answered as sjc answers it. Every call is appended to ``$SJC_STUB_LOG``."""

import json
import os
import sys
import time

payload = json.load(sys.stdin)
event = payload.get("hook_event_name")
with open(os.environ["SJC_STUB_LOG"], "a") as log:
    log.write(json.dumps({"event": event, "argv": sys.argv[1:], "message": payload.get("message")}) + "\n")
if event == "CompactionStart":
    print(json.dumps({"enabled": True, "time_budget_s": 1}))
    sys.exit(0)
if event != "Summarize":
    sys.exit(0)
with open(os.environ["SJC_STUB_CONTROL"]) as fh:
    how = fh.read().strip()
if how == "hang":
    time.sleep(600)
elif how == "exit":
    print("stub: the judge is down", file=sys.stderr)
    sys.exit(3)
else:
    print("this is not JSON")
