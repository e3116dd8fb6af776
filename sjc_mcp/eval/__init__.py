"""Measuring sjc: the summary judge on labelled provenance cases (``judge``, cases read by ``cases``)
and tool-result pruning on recorded transcripts (``tools``)."""
