"""Split, retrieve, judge, decide, render, log: the one library call every surface goes through.

``judge_boundary`` for a compaction (a transcript's, a recognised request's), ``judge_summary`` /
``prune_summary`` for a summary and its evidence. The steps, one module each:

- ``inputs``: the caller's evidence made ``Source``s, the size limits;
- ``retrieve``: the judge's request, each entry with the evidence BM25 finds for it;
- ``judging``: the judge run, the results built, rendered and logged (``judge_summary``, ``prune_summary``);
- ``decisions``: each entry's decision from its score, then the grounds, the span and the guard;
- ``boundary``: a ``Boundary`` made those calls' arguments, with its log fields (``judge_boundary``).

As a library it writes nothing and prints nothing: what the caller should know comes back in the result
(``warnings``, ``errors``); a decision-log record is written only with ``log=True`` (to the config's
``decision_log``), as every surface of sjc asks for it.

What every surface inherits from here, besides the judgment itself:

- a summary the splitter finds no entries in (not text, no structure) is returned byte for byte,
  judged as nothing, with a warning (and, when logging, a record of status ``unstructured``);
- on a span that visibly starts mid-session (``incomplete_span``), an entry with no source in the
  span is ``unjudged``, not pruned: its source may lie before the file's first record;
- on a span with no user message at all, entries of the sections that restate the user's words are
  ``unjudged``, not pruned;
- an entry scored below the cut whose judge has no grounds to delete it that a person could check
  (``Judgment.grounded`` False: nothing it names was looked for and found missing, no other value of
  the same thing was shown) is kept, its reason starting ``doubtful, kept``;
- when pruning would remove more than ``max_prune_share`` of the entries, nothing is removed (the
  guard), and the log says so.
"""

from __future__ import annotations

from sjc_mcp.pipeline.boundary import judge_boundary
from sjc_mcp.pipeline.decisions import decide, decide_entries, entry_results
from sjc_mcp.pipeline.inputs import MAX_EVIDENCE_BYTES, MAX_SUMMARY_BYTES, MID_SESSION, EvidenceLike, to_sources
from sjc_mcp.pipeline.judging import judge_summary, prune_summary, run_judge
from sjc_mcp.pipeline.retrieve import build_request

__all__ = [
    "MAX_EVIDENCE_BYTES",
    "MAX_SUMMARY_BYTES",
    "MID_SESSION",
    "EvidenceLike",
    "build_request",
    "decide",
    "decide_entries",
    "entry_results",
    "judge_boundary",
    "judge_summary",
    "prune_summary",
    "run_judge",
    "to_sources",
]
