"""The decision log: the append-only, hash-chained file (``chain``), the records a judgment writes
(``records``), and the check that the log is whole and unedited (``verify``)."""
