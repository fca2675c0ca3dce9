"""Shared vocabulary of the anchoring engine: selectors, anchors, thresholds."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from diff_match_patch import diff_match_patch

Status = Literal["exact", "moved", "fuzzy", "orphaned"]
Diff = list[tuple[int, str]]

DIFF_DELETE, DIFF_INSERT, DIFF_EQUAL = -1, 1, 0

# Provenance of the thresholds below. They were set with the edit scenarios of
# tests/reviews/test_anchoring.py (61 at the time, each a realistic edit of a design document)
# and the generated revisions of bench/reanchor.py (templated prose: look-alikes everywhere),
# the rule being that a wrong anchor is worse than an orphan. They were then checked, unchanged
# but for ONE_SIDED_QUOTE_MIN (added), on real revisions: bench/reanchor_corpus.py, 54 revision
# pairs of rust-lang/rfcs, golang/proposal and kubernetes/enhancements documents, ~1,330
# annotations a placement seed (docs/operations.md, "Re-anchoring, measured"). There, moving
# any one of them as far as noted ("corpus: ...", seed 1; measured before ONE_SIDED_QUOTE_MIN
# and the last refinements of the truth rules) changed no verdict but where said:
# most are backstops, each catching cases the tests pin down, rather than finely balanced.
#
# Context: the selector's prefix/suffix, compared by similarity...
SELECTOR_CONTEXT = 32  # prefix/suffix characters a W3C selector keeps by default
CONTEXT_CHARS = 40  # prefix/suffix characters compared (the UI stores at least SELECTOR_CONTEXT)
# Mean prefix/suffix similarity for a candidate found by search (unrelated English scores
# near 0 with text_similarity, see text.py). Corpus: 0.35 attaches one more edited passage, 0.65
# orphans two correct landings (their context was edited).
CONTEXT_MIN = 0.5
SIDE_FLOOR = 0.3  # ...with neither side unrecognisable (below this a side is noise)
# Quotes shorter than this (two or three words) carry little evidence on their own: both
# sides must match SHORT_CONTEXT_MIN. Corpus: 12 gains one correct landing, 0.5 changes
# nothing (the scenarios pass with either; not adopted without a wider check).
SHORT_QUOTE_CHARS = 16
SHORT_CONTEXT_MIN = 0.65
# Both sides, for a candidate outside where the diff put the passage: near-verbatim, since
# templated sentences repeat their context with one figure changed. Corpus: 0.75 changes
# nothing.
OUTSIDE_CONTEXT_MIN = 0.9
# ...and the old text around the passage, compared verbatim (whitespace folded). Templated
# prose repeats phrases of 30-70 characters; a longer run of unchanged context is what tells a
# passage from its look-alikes when only one side of its context survived.
WIDE_CONTEXT = 96
ONE_SIDED_RUN = 64  # corpus: 40 changes nothing
UNIT_RUN = 16  # ...or at least this long and reaching the edge of its paragraph or list item
# A verbatim landing is orphaned when another copy of the quote has verbatim old context within
# this many characters of the landing's (issue #36: templated sections look alike up to a name).
# Corpus: 16 orphans 36 more present passages (rust-lang/rfcs 22) for 2 fewer wrong generated
# landings; 0 (a twin exactly as well placed) is what is kept.
TWIN_MARGIN = 12
# A fuzzy landing is orphaned when the longest run it shares with the quote is this share of the
# quote, recurs in the new text, and the span around another copy is as similar to the quote
# within the margin (issue #36: a deleted section's twin section written in its place).
TEMPLATE_SHARE = 0.4
TWIN_SIMILARITY_MARGIN = 0.05
MAX_TWINS = 24
# A quote this long occurring once in each text needs no context anywhere (where the diff keeps
# it or maps it, any length will do): about six words, longer
# than the phrases templated prose repeats. Corpus: 24 turns three orphaned-although-present
# short passages into correct landings with no wrong one, but the generated bench's many-seed
# check (bench/reanchor.py --check-seeds 10) then mis-anchors one passage: not adopted.
DISTINCTIVE_CHARS = 40
# A whole line (indentation aside) at least this long that occurs as a whole line once in each
# text is the same line wherever it went (a table row, a bullet): a line is a larger unit than
# a quote, so it needs fewer characters to be evidence on its own. Corpus (three placement
# seeds) and the generated bench: 24 turns orphaned table rows into correct landings, none wrong.
UNIQUE_LINE_CHARS = 24
# Step 3
FUZZY_MIN_CHARS = 6  # below this a fuzzy match means nothing
# A fuzzy landing keeps at least this share of the quote's length (issue #36: a sentence cut to
# its first half, "No inconsistent state is reached when PodGroups rapidly come and go.",
# scored 0.67 on what was left; whether that is still the passage is a guess: orphaned).
FUZZY_MIN_LENGTH_SHARE = 0.6
FUZZY_QUOTE_MIN = 0.6  # a reworded sentence keeps ~0.6-0.9; corpus: 0.5 changes nothing
PINNED_CONTEXT = 0.9  # both sides this similar: the span between them is the passage...
PINNED_QUOTE_MIN = 0.5  # ...even if it was reworded this much (corpus: 0.4 changes nothing)
# A near candidate recognisable on one side of its context only needs this quote similarity
# (issue #27): text inserted where the passage was inherits that side, so a new sentence
# opening with the quote's first words ("First, we can see that ...") captured the annotation
# at 0.67 while its passage sat, renumbered, one paragraph down. Same bar as FAR_QUOTE_MIN.
# Corpus (seeds 1 and 2, 2,654 annotations): five edited passages attached at 0.64-0.68 are
# orphaned instead, two of them on a different sentence of the same template; nothing else.
ONE_SIDED_QUOTE_MIN = 0.75
LONE_QUOTE_MIN = 0.85  # context lost (reordered list items): a near, same-section, distinctive
COMMON_SEEDS_MAX = 0.25  # quote may land if nothing else in the old text resembled it
# Distance: candidates away from where the diff maps the passage
NEAR_CHARS = 200
FAR_QUOTE_MIN = 0.75  # corpus: 0.6 changes nothing (far candidates also need move evidence)
FAR_CONTEXT_MIN = 0.6
MOVE_WINDOW = 200  # a far candidate must sit in inserted text resembling the deleted text...
MOVE_EVIDENCE_MIN = 0.9  # ...around the passage's old place: the diff must show the move
# (corpus: 0.7 changes nothing)
# Max share of a candidate the diff keeps from other old text: what keeps a verbatim twin of
# a reworded sentence from capturing it (corpus, rust-lang/rfcs cargo-min-publish-age: a
# repeated sentence rewritten after one item, kept after the next). Corpus: 0.9 changes nothing.
FOREIGN_MAX = 0.5
# Revision diff: changed sentences are paired when this similar
PAIR_MIN = 0.7  # (a template sentence with three slots changed is about 0.6; corpus: 0.6
# changes nothing)
NUMBER_WEIGHT = 3  # ...weighing numbers more: "760 req/s" is not "1760 req/s"
MAX_PAIRING = 2500
# Search limits
MAX_OCCURRENCES = 200
SEED_CHARS = 8
SEED_MAX_HITS = 8
MAX_BOUNDARY_CANDIDATES = 64
MAX_BOUNDARY_SCORES = 12  # ...of which at most this many are scored (best upper bounds first)
BOUNDARY_SLACK = 0.05  # boundaries this close in quote similarity are settled by context

ORPHANED_SCORE = 0.0

WHITESPACE_RE = re.compile(r"\s+")
TOKEN_RE = re.compile(r"\w+|[^\w\s]")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
SENTENCE_BREAK = re.compile(r"[.!?][\"')\]*_]*\s+")
SENTENCE_END = re.compile(r"[.!?:;][\"')\]]*\s+$")
BLOCK_OPENER = re.compile(r"[ \t]*(?:(?:[-*+>]|\d+[.)]|#{1,6})[ \t]|\|)")
BLOCK_EDGE = re.compile(r"\r?\n[ \t]*(?:\r?\n|(?:[-*+>]|\d+[.)]|#{1,6})[ \t]|\|)")

DIFFER = diff_match_patch()  # revision diffs (1 s budget per changed run)
SIMILAR = diff_match_patch()  # short strings: quotes and contexts
SIMILAR.Diff_Timeout = 0.2
MATCHER = diff_match_patch()  # bitap, only for quotes up to Match_MaxBits characters


@dataclass(frozen=True)
class Selector:
    """W3C TextQuoteSelector + TextPositionSelector (+ Markdown heading path) on one revision."""

    exact: str
    prefix: str
    suffix: str
    start: int
    end: int
    heading_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class Anchor:
    """Where an annotation landed in a revision. Offsets are ``str`` indices; None if orphaned."""

    status: Status
    start: int | None
    end: int | None
    score: float


ORPHANED = Anchor(status="orphaned", start=None, end=None, score=ORPHANED_SCORE)
