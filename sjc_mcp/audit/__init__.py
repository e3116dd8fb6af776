"""Reading the decision log back: what was pruned at each boundary and why (``summary``), shown in a
terminal (``view``) or as one HTML page (``html``); ``replay`` judges recorded transcripts after the fact."""
