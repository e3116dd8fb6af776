"""``sjc proxy``: prune the compaction summary in-band, in front of the model API (see ``app``)."""
