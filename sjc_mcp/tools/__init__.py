"""The second method: pruning tool results. Outputs a later call superseded (``supersession``), then
those the task no longer needs (``relevance``, asked through ``request``), cut with a note
(``truncation``)."""
