"""Re-anchoring annotations across revisions of a design document (reviews/anchoring.py).

Each scenario is a realistic edit of `design_doc.md`. The expected landing span is computed from
the new text (the intended passage located in it), never hard-coded offsets.
`pytest tests/reviews/test_anchoring.py -q -s -k table` prints the scenario table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from diff_match_patch import diff_match_patch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reviews.anchoring import (
    Anchor,
    Selector,
    anchor_diff_compute,
    anchor_locate,
    anchors_locate,
    quote_find,
    selector_from_position,
)
from reviews.anchoring.text import _fold_compute

DOC = (Path(__file__).parent / "design_doc.md").read_text(encoding="utf-8")

Edit = Callable[[str], str]

DUP = "Requests longer than the context window are rejected with HTTP 413 before they reach a GPU."
KV_PARAGRAPH = (
    "Each decode replica holds a 40 GB paged KV cache and evicts the least-recently-used sequences\n"
    "when it is full. Evicted sequences are recomputed from their prompt prefix, which costs about\n"
    "one prefill step per evicted sequence. Prefix sharing lets tenants with the same system prompt\n"
    "reuse cached blocks instead of recomputing them.\n\n"
)
EVICTED = (
    "Evicted sequences are recomputed from their prompt prefix, which costs about\n"
    "one prefill step per evicted sequence."
)
PREFILL = "Prefill replicas scale on queue depth, with a floor of two replicas per zone."
DECODE = "Decode replicas\nscale on KV-cache occupancy, with a floor of two replicas per zone."
LATENCY = "Latency budget ≈ 250 ms p99 at the gateway 🚦 — anything slower pages the on-call."
TENANT_KEYS = "Tenant keys are hashed at rest and compared in constant time."
LAST_LINE = "Should prefix sharing cross tenant boundaries if both tenants opt in?"
TITLE = "# Design: token-streaming inference gateway"
NEW_CONTEXT = (
    "An earlier draft of this document proposed extending the oldest proxy instead; the\n"
    "appendix explains why that was dropped.\n\n"
)
SECURITY = (
    "## Security\n\nTenant keys are hashed at rest and compared in constant time. Prompts and "
    "outputs are never\nwritten to logs; only their token counts are.\n\n"
)
GOALS = [
    "- Stream the first token to the client in under 400 ms at p95 for prompts up to 4k tokens.\n",
    "- Serve 2,000 concurrent streams per region with no more than 64 H100 GPUs.\n",
    "- Give every tenant a token budget per minute and enforce it before work reaches a GPU.\n",
    "- Keep one OpenAI-compatible API so that existing SDKs work unchanged.\n",
]
FAILURE_413 = "- A prompt is longer than the model accepts. " + DUP + "\n"
EMBEDDING = "Embedding replicas scale on queue depth, with a floor of two replicas per zone."
PREFIX_SHARING = (
    "Prefix sharing lets tenants with the same system prompt\n"
    "reuse cached blocks instead of recomputing them."
)
SPECULATIVE = (
    "Speculative decoding lets the draft model reuse cached blocks instead of recomputing them."
)


SECURITY_LOGS = "Prompts and outputs are never\nwritten to logs; only their token counts are."
ROUTER_FIRST = (
    "The router terminates TLS, authenticates the tenant key and looks up the tenant's quota in a\n"
    "local cache that refreshes every ten seconds."
)
OBSERVABILITY_FIRST = (
    "Every request logs tenant, model, prompt tokens, output tokens, time to first token and total\n"
    "latency."
)
CAPACITY_SENTENCE = "carries about 96 streams, so 2,000 streams need 21 GPUs for decode alone."
ROLLOUT_FIRST = "We roll out one region at a time, starting with Zürich, behind a per-tenant flag."


# --------------------------------------------------------------------------- edit helpers


def same(text: str) -> str:
    return text


def sub(old: str, new: str, *, after: str | None = None) -> Edit:
    """Replace the one occurrence of `old` (the first after `after`, when given)."""

    def edit(text: str) -> str:
        begin = text.index(after) if after else 0
        if after is None:
            assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
        at = text.index(old, begin)
        return text[:at] + new + text[at + len(old) :]

    return edit


def insert_before(marker: str, new: str) -> Edit:
    return sub(marker, new + marker)


def insert_after(marker: str, new: str) -> Edit:
    return sub(marker, marker + new)


def cut(start: str, stop: str) -> Edit:
    """Delete from `start` up to (not including) the next `stop`."""

    def edit(text: str) -> str:
        begin = text.index(start)
        return text[:begin] + text[text.index(stop, begin) :]

    return edit


def move(block: str, before: str) -> Edit:
    def edit(text: str) -> str:
        assert text.count(block) == 1
        text = text.replace(block, "", 1)
        at = text.index(before)
        return text[:at] + block + text[at:]

    return edit


def chain(*edits: Edit) -> Edit:
    def edit(text: str) -> str:
        for step in edits:
            text = step(text)
        return text

    return edit


def to_crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def to_lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def rewrite_elsewhere(text: str) -> str:
    """Reword paragraphs in four other sections (the edits that come with a reorder)."""
    return chain(
        sub(
            ROUTER_FIRST,
            "TLS ends at the router, which checks the tenant key and reads the tenant's quota from a\n"
            "cache refreshed every ten seconds.",
        ),
        sub(
            OBSERVABILITY_FIRST,
            "Each request records the tenant, the model, token counts both ways, time to first\n"
            "token and end-to-end latency.",
        ),
        sub(CAPACITY_SENTENCE, "serves roughly 96 streams; 2,000 streams therefore need 21 GPUs."),
        sub(
            ROLLOUT_FIRST, "Rollout goes region by region, Zürich first, behind a flag per tenant."
        ),
    )(text)


def reverse_goals(text: str) -> str:
    block = "".join(GOALS)
    assert text.count(block) == 1
    return text.replace(block, "".join(reversed(GOALS)))


# --------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class Scenario:
    name: str
    quote: str  # the annotated passage in the old revision
    edit: Edit  # old revision -> new revision
    expect: frozenset[str]  # acceptable statuses
    landed: str | None = None  # the intended passage in the new revision (None: orphaned)
    quote_after: str | None = None  # annotate the first occurrence of `quote` after this
    landed_after: str | None = None  # the intended passage is the first one after this
    old: Edit = same  # the base document -> the old revision
    tamper: Callable[[Selector], Selector] | None = None  # damage the stored selector


def S(  # noqa: N802 - a short constructor keeps the scenario list readable
    name: str,
    quote: str,
    edit: Edit,
    expect: str,
    landed: str | None = None,
    *,
    quote_after: str | None = None,
    landed_after: str | None = None,
    old: Edit = same,
    tamper: Callable[[Selector], Selector] | None = None,
) -> Scenario:
    return Scenario(
        name=name,
        quote=quote,
        edit=edit,
        expect=frozenset(expect.split("|")),
        landed=landed,
        quote_after=quote_after,
        landed_after=landed_after,
        old=old,
        tamper=tamper,
    )


SCENARIOS: list[Scenario] = [
    # Section moves (issue 12): a passage verbatim once in the new text, whose only old
    # occurrence left its old place, lands `moved` whatever happened around it.
    S(
        "section moved above another",
        TENANT_KEYS,
        move(SECURITY, "## Capacity and cost"),
        "moved",
        TENANT_KEYS,
    ),
    S(
        "section moved to the top",
        SECURITY_LOGS,
        move(SECURITY, "## Context"),
        "moved",
        SECURITY_LOGS,
    ),
    S(
        "section moved, paragraphs rewritten elsewhere",
        SECURITY_LOGS,
        chain(move(SECURITY, "## Architecture"), rewrite_elsewhere),
        "moved",
        SECURITY_LOGS,
    ),
    S(
        "section moved, its first sentence annotated, edits elsewhere",
        TENANT_KEYS,
        chain(move(SECURITY, "## Architecture"), rewrite_elsewhere),
        "moved",
        TENANT_KEYS,
    ),
    S(
        "section moved, the annotated sentence's neighbour rewritten",
        SECURITY_LOGS,
        chain(
            move(SECURITY, "## Architecture"),
            sub(TENANT_KEYS, "Keys are stored as salted hashes and compared in constant time."),
            rewrite_elsewhere,
        ),
        "moved",
        SECURITY_LOGS,
    ),
    S(
        "section moved to the top, its other sentence rewritten",
        TENANT_KEYS,
        chain(
            move(SECURITY, "## Context"),
            sub("written to logs; only their token counts are.", "logged; only token counts are."),
            rewrite_elsewhere,
        ),
        "moved",
        TENANT_KEYS,
    ),
    S(
        "section deleted, a look-alike sentence elsewhere",
        TENANT_KEYS,
        chain(
            sub(SECURITY, ""),
            insert_after(
                "## Failure modes\n\n",
                "Tenant keys are hashed at rest and compared in constant time by the router.\n\n",
            ),
            rewrite_elsewhere,
        ),
        "orphaned",
    ),
    S(
        "section moved with the sentence reworded, a look-alike elsewhere",
        TENANT_KEYS,
        chain(
            move(SECURITY, "## Architecture"),
            sub(TENANT_KEYS, "Tenant keys are hashed at rest and compared in fixed time."),
            insert_after(
                "## Failure modes\n\n",
                "Tenant keys are hashed at rest and compared in constant time by every router.\n\n",
            ),
            rewrite_elsewhere,
        ),
        "fuzzy|orphaned",
        "Tenant keys are hashed at rest and compared in fixed time.",
    ),
    S("unchanged", EVICTED, same, "exact", EVICTED),
    S(
        "paragraph inserted far before",
        EVICTED,
        insert_after("## Context\n\n", NEW_CONTEXT),
        "exact",
        EVICTED,
    ),
    S(
        "paragraph inserted far after",
        "one gateway in front of a shared GPU fleet",
        insert_after("## Security\n\n", "All traffic uses mTLS inside the cluster.\n\n"),
        "exact",
        "one gateway in front of a shared GPU fleet",
    ),
    S(
        "sentence inserted right before",
        EVICTED,
        insert_before("Evicted sequences", "Eviction is per sequence, never per block. "),
        "exact",
        EVICTED,
    ),
    S(
        "sentence inserted right after",
        TENANT_KEYS,
        insert_after(TENANT_KEYS, " Keys rotate every 90 days."),
        "exact",
        TENANT_KEYS,
    ),
    S(
        "paragraph moved to another section",
        EVICTED,
        move(KV_PARAGRAPH, "## Observability"),
        "moved",
        EVICTED,
    ),
    S("whole paragraph moved", LATENCY, move(LATENCY + "\n\n", "## Security"), "moved", LATENCY),
    S(
        "one word reworded",
        "It then picks the\nreplica with the most free KV-cache blocks",
        sub("It then picks the", "It then chooses the"),
        "fuzzy",
        "It then chooses the\nreplica with the most free KV-cache blocks",
    ),
    S(
        "two words reworded",
        "Prefill and decode run on separate pools so that long prompts do not stall streaming tokens.",
        sub(
            "on separate pools so that long prompts do not stall",
            "on dedicated pools so that long prompts never stall",
        ),
        "fuzzy",
        "Prefill and decode run on dedicated pools so that long prompts never stall streaming tokens.",
    ),
    S(
        "typo fixed inside the quote",
        "The router will recieve a heartbeat from every\nreplica",
        sub("recieve", "receive"),
        "fuzzy",
        "The router will receive a heartbeat from every\nreplica",
    ),
    S(
        "text inserted inside the quote",
        "Every request logs tenant, model, prompt tokens, output tokens, time to first token",
        sub("output tokens, time", "output tokens, cache hits, time"),
        "fuzzy",
        "Every request logs tenant, model, prompt tokens, output tokens, cache hits, time to first "
        "token",
    ),
    S(
        "first word changed",
        "Dashboards show per-tenant spend and the KV-cache hit rate per pool.",
        sub("Dashboards show", "Our dashboards show"),
        "fuzzy",
        "Our dashboards show per-tenant spend and the KV-cache hit rate per pool.",
    ),
    S(
        "last word changed",
        "Prompts and outputs are never\nwritten to logs; only their token counts are.",
        sub("token counts are.", "token counts appear."),
        "fuzzy",
        "Prompts and outputs are never\nwritten to logs; only their token counts appear.",
    ),
    S(
        "heavily rewritten",
        "The KV cache moves from\nprefill to decode over NVLink inside a node and over RDMA between "
        "nodes.",
        sub(
            "The KV cache moves from\nprefill to decode over NVLink inside a node and over RDMA "
            "between nodes.",
            "Transfers between the two pools use whatever interconnect the cluster offers, which we "
            "will benchmark before launch.",
        ),
        "orphaned|fuzzy",
        "Transfers between the two pools use whatever interconnect the cluster offers, which we will "
        "benchmark before launch.",
    ),
    S("deleted, look-alike remains (prefill)", PREFILL, sub(PREFILL + " ", ""), "orphaned"),
    S("deleted, look-alike remains (decode)", DECODE, sub(" " + DECODE, ""), "orphaned"),
    S(
        "deleted, identical duplicate remains",
        DUP,
        sub(DUP + "\n", "", after="## API"),
        "orphaned",
        quote_after="## API",
    ),
    S(
        "duplicate: 2nd copy, edits before",
        DUP,
        chain(
            insert_after("## Context\n\n", NEW_CONTEXT),
            sub("running usage count.", "running usage count and a sequence number."),
        ),
        "exact",
        DUP,
        quote_after="## Failure modes",
        landed_after="## Failure modes",
    ),
    S(
        "duplicate: 2nd copy, 1st deleted",
        DUP,
        sub(DUP + "\n", "", after="## API"),
        "exact",
        DUP,
        quote_after="## Failure modes",
        landed_after="## Failure modes",
    ),
    S(
        "duplicate: 1st copy, edits between",
        DUP,
        sub("local cache that refreshes every ten seconds", "local cache that refreshes every 5 s"),
        "exact",
        DUP,
        quote_after="## API",
        landed_after="## API",
    ),
    S(
        "duplicate: 2nd copy, 1st reworded",
        DUP,
        sub(
            DUP,
            "Requests over the context window get HTTP 413 before reaching a GPU.",
            after="## API",
        ),
        "exact",
        DUP,
        quote_after="## Failure modes",
        landed_after="## Failure modes",
    ),
    S(
        "duplicate: 2nd copy's list item moved",
        DUP,
        move(FAILURE_413, "- A replica crashes mid-stream"),
        "moved",
        DUP,
        quote_after="## Failure modes",
        landed_after="## Failure modes",
    ),
    S(
        "duplicate: short quote in 2nd copy",
        "HTTP 413",
        insert_after("## Context\n\n", NEW_CONTEXT),
        "exact",
        "HTTP 413",
        quote_after="## Failure modes",
        landed_after="## Failure modes",
    ),
    S(
        "heading above renamed",
        TENANT_KEYS,
        sub("## Security\n", "## Security and privacy\n"),
        "exact",
        TENANT_KEYS,
    ),
    S(
        "annotated heading renamed",
        "Rollout and rollback",
        sub("## Rollout and rollback", "## Rollout & rollback"),
        "fuzzy",
        "Rollout & rollback",
    ),
    S("CRLF to LF, single-line quote", LAST_LINE, to_lf, "exact", LAST_LINE, old=to_crlf),
    S(
        "CRLF to LF, multi-line quote",
        "The proxies\r\ndisagree on timeouts, retry rules and quota",
        to_lf,
        "fuzzy|moved",
        "The proxies\ndisagree on timeouts, retry rules and quota",
        old=to_crlf,
    ),
    S(
        "LF to CRLF, multi-line quote",
        "The proxies\ndisagree on timeouts, retry rules and quota",
        to_crlf,
        "fuzzy|moved",
        "The proxies\r\ndisagree on timeouts, retry rules and quota",
    ),
    S(
        "paragraph reflowed",
        "This\ndocument proposes one gateway in front of a shared GPU fleet",
        sub(
            "end to end. This\ndocument proposes one gateway in front of a shared GPU fleet that",
            "end to end.\nThis document proposes one gateway\nin front of a shared GPU fleet that",
        ),
        "fuzzy|moved",
        "This document proposes one gateway\nin front of a shared GPU fleet",
    ),
    S(
        "list continuation re-indented",
        "the client\n  retries with the tokens it already has",
        sub("the client\n  retries", "the client\n    retries"),
        "fuzzy",
        "the client\n    retries with the tokens it already has",
    ),
    S(
        "non-ASCII quote, text inserted before",
        "starting with Zürich, behind a per-tenant flag",
        insert_after("## Context\n\n", NEW_CONTEXT),
        "exact",
        "starting with Zürich, behind a per-tenant flag",
    ),
    S(
        "emoji quote reworded",
        LATENCY,
        sub("≈ 250 ms p99", "≈ 300 ms p99"),
        "fuzzy",
        LATENCY.replace("250", "300"),
    ),
    S(
        "short emoji quote, text inserted before",
        "gateway 🚦 —",
        insert_after("## Context\n\n", NEW_CONTEXT),
        "exact",
        "gateway 🚦 —",
    ),
    S(
        "very start, text appended at the end",
        TITLE,
        lambda t: t + "\nAppendix: none yet.\n",
        "exact",
        TITLE,
    ),
    S(
        "very start, front matter inserted",
        TITLE,
        lambda t: "---\ntitle: gateway\n---\n\n" + t,
        "exact",
        TITLE,
    ),
    S(
        "very start, title reworded",
        TITLE,
        sub("token-streaming inference gateway", "token-streaming LLM inference gateway"),
        "fuzzy",
        "# Design: token-streaming LLM inference gateway",
    ),
    S(
        "very end, edits before",
        LAST_LINE,
        insert_after("## Context\n\n", NEW_CONTEXT),
        "exact",
        LAST_LINE,
    ),
    S(
        "very end, text appended",
        LAST_LINE,
        lambda t: t + "\nShould we expose logprobs?\n",
        "exact",
        LAST_LINE,
    ),
    S(
        "whole section deleted",
        "Each decode replica holds a 40 GB paged KV cache",
        cut("### KV cache", "## Capacity and cost"),
        "orphaned",
    ),
    S(
        "whole subsection deleted",
        "drops replicas that miss three heartbeats in a row",
        cut("### Router", "### Prefill and decode pools"),
        "orphaned",
    ),
    S("list items reordered", GOALS[1].strip(), reverse_goals, "moved", GOALS[1].strip()),
    S(
        "list items reordered, annotated item reworded",
        GOALS[1].strip(),
        chain(reverse_goals, sub("64 H100 GPUs", "64 H100 or H200 GPUs")),
        "fuzzy",
        GOALS[1].strip().replace("H100 GPUs", "H100 or H200 GPUs"),
    ),
    S(
        "table row edited elsewhere",
        "| tokens per second per H100 | 2,400 | decode, batch 64 |",
        sub("| GPUs per region | 56 | plus 8 spare |", "| GPUs per region | 60 | plus 4 spare |"),
        "exact",
        "| tokens per second per H100 | 2,400 | decode, batch 64 |",
    ),
    S(
        "table cell changed",
        "| tokens per second per H100 | 2,400 | decode, batch 64 |",
        sub("| 2,400 | decode", "| 2,600 | decode"),
        "fuzzy",
        "| tokens per second per H100 | 2,600 | decode, batch 64 |",
    ),
    S(
        "short quote, edits before",
        "40 GB",
        insert_after("## Context\n\n", NEW_CONTEXT),
        "exact",
        "40 GB",
    ),
    S(
        "short quote deleted, same phrase elsewhere",
        "ten seconds",
        sub(" in a\nlocal cache that refreshes every ten seconds", ""),
        "orphaned",
    ),
    S(
        "code block edited elsewhere",
        "kv_cache_hit_rate_min: 0.6",
        sub("ttft_p95_ms: 400", "ttft_p95_ms: 450"),
        "exact|moved",
        "kv_cache_hit_rate_min: 0.6",
    ),
    S(
        "replaced by unrelated text",
        "Fine-tuning or training jobs; the fleet only serves inference.",
        sub(
            "Fine-tuning or training jobs; the fleet only serves inference.",
            "Batch embedding jobs run on a separate CPU cluster.",
        ),
        "orphaned",
    ),
    S(
        "sentence split in two",
        "Rollback flips\nthe flag back to the legacy proxy; in-flight streams finish on the gateway.",
        sub("legacy proxy; in-flight", "legacy proxy. In-flight"),
        "fuzzy",
        "Rollback flips\nthe flag back to the legacy proxy. In-flight streams finish on the gateway.",
    ),
    S("whole section moved", TENANT_KEYS, move(SECURITY, "## Observability"), "moved", TENANT_KEYS),
    S(
        "paragraph break removed inside the quote",
        "in-flight streams finish on the gateway.\n\nLatency budget ≈ 250 ms p99",
        sub("on the gateway.\n\nLatency", "on the gateway. Latency"),
        "fuzzy|moved",
        "in-flight streams finish on the gateway. Latency budget ≈ 250 ms p99",
    ),
    S(
        "stale stored offsets",
        TENANT_KEYS,
        insert_after("## Context\n\n", NEW_CONTEXT),
        "exact",
        TENANT_KEYS,
        tamper=lambda s: replace(s, start=s.start + 3, end=s.end + 3),
    ),
    S(
        "whole document replaced",
        EVICTED,
        lambda t: "# Something else\n\nTotally different.\n",
        "orphaned",
    ),
    S(
        "paragraph moved and reworded",
        EVICTED,
        chain(
            move(KV_PARAGRAPH, "## Observability"), sub("are recomputed from", "are rebuilt from")
        ),
        "fuzzy",
        EVICTED.replace("recomputed", "rebuilt"),
    ),
    S(
        "number changed",
        "Each decode replica holds a 40 GB paged KV cache",
        sub("holds a 40 GB", "holds a 48 GB"),
        "fuzzy",
        "Each decode replica holds a 48 GB paged KV cache",
    ),
    S("list item deleted", GOALS[3].strip(), sub(GOALS[3], ""), "orphaned"),
    S(
        "reworded, look-alike inserted next to it",
        PREFILL,
        sub(PREFILL, PREFILL.replace("queue depth", "queue length") + " " + EMBEDDING),
        "fuzzy",
        PREFILL.replace("queue depth", "queue length"),
    ),
    S(
        "deleted, look-alike inserted elsewhere",
        PREFILL,
        chain(sub(PREFILL + " ", ""), insert_after("## Observability\n\n", EMBEDDING + "\n\n")),
        "orphaned",
    ),
    S(
        "second of two sentences ending alike deleted",
        "reuse cached blocks instead of recomputing them.",
        sub(" " + SPECULATIVE, ""),
        "orphaned",
        quote_after="Speculative decoding",
        old=sub(PREFIX_SHARING, PREFIX_SHARING + " " + SPECULATIVE),
    ),
    S(
        "first of two sentences ending alike kept",
        "reuse cached blocks instead of recomputing them.",
        sub(" " + SPECULATIVE, ""),
        "exact",
        "reuse cached blocks instead of recomputing them.",
        old=sub(PREFIX_SHARING, PREFIX_SHARING + " " + SPECULATIVE),
    ),
    S("look-alike deleted, annotated one kept", PREFILL, sub(" " + DECODE, ""), "exact", PREFILL),
]


# --------------------------------------------------------------------------- running them


@dataclass(frozen=True)
class Outcome:
    scenario: Scenario
    anchor: Anchor
    intended: tuple[int, int] | None
    new: str
    ok: bool


def span_of(text: str, passage: str, after: str | None) -> tuple[int, int]:
    start = text.index(passage, text.index(after) if after else 0)
    return start, start + len(passage)


def run(scenario: Scenario, *, plain_diff: bool = False) -> Outcome:
    old = scenario.old(DOC)
    new = scenario.edit(old)
    start, end = span_of(old, scenario.quote, scenario.quote_after)
    selector = selector_from_position(text=old, start=start, end=end)
    if scenario.tamper:
        selector = scenario.tamper(selector)
    diffs = None
    if plain_diff:  # what a caller holding an ordinary diff-match-patch diff would pass
        dmp = diff_match_patch()
        diffs = dmp.diff_main(old, new)
        dmp.diff_cleanupSemantic(diffs)
    anchor = anchor_locate(selector=selector, old_text=old, new_text=new, diffs=diffs)
    intended = span_of(new, scenario.landed, scenario.landed_after) if scenario.landed else None
    if anchor.status == "orphaned":
        ok = "orphaned" in scenario.expect and anchor.start is None and anchor.end is None
    else:
        ok = anchor.status in scenario.expect and (anchor.start, anchor.end) == intended
    return Outcome(scenario, anchor, intended, new, ok)


def scenario_table() -> str:
    """The scenario table: what each scenario expects and where the annotation landed."""
    rows = [("scenario", "expected", "got", "start:end", "intended", "score", "check")]
    for scenario in SCENARIOS:
        out = run(scenario)
        a = out.anchor
        rows.append(
            (
                scenario.name,
                "|".join(sorted(scenario.expect)),
                a.status,
                "-" if a.start is None else f"{a.start}:{a.end}",
                "-" if out.intended is None else f"{out.intended[0]}:{out.intended[1]}",
                f"{a.score:.3f}",
                "ok" if out.ok else "FAIL",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def test_there_are_enough_scenarios() -> None:
    assert len(SCENARIOS) >= 40
    assert len({s.name for s in SCENARIOS}) == len(SCENARIOS)


@pytest.mark.parametrize("plain_diff", [False, True], ids=["own diff", "plain dmp diff"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario(scenario: Scenario, plain_diff: bool) -> None:
    out = run(scenario, plain_diff=plain_diff)
    anchor = out.anchor
    assert anchor.status in scenario.expect, anchor
    if anchor.status == "orphaned":
        assert (anchor.start, anchor.end, anchor.score) == (None, None, 0.0)
        return
    assert anchor.start is not None
    assert anchor.end is not None
    assert out.new[anchor.start : anchor.end] == scenario.landed, anchor
    assert (anchor.start, anchor.end) == out.intended
    if anchor.status in ("exact", "moved"):
        assert anchor.score == 1.0
        assert out.new[anchor.start : anchor.end] == scenario.quote
    else:
        assert 0.0 < anchor.score < 1.0


def test_scenario_table() -> None:
    table = scenario_table()
    print()
    print(table)
    assert "FAIL" not in table


def test_batch_matches_single_and_shared_diff() -> None:
    old = DOC
    new = chain(move(KV_PARAGRAPH, "## Observability"), sub("recieve", "receive"))(old)
    selectors = [
        selector_from_position(text=old, start=(i := old.index(q)), end=i + len(q))
        for q in (EVICTED, PREFILL, TENANT_KEYS, "The router will recieve a heartbeat", TITLE)
    ]
    diffs = anchor_diff_compute(old_text=old, new_text=new)
    single = [anchor_locate(selector=s, old_text=old, new_text=new, diffs=diffs) for s in selectors]
    assert anchors_locate(selectors=selectors, old_text=old, new_text=new) == single
    assert [a.status for a in single] == ["moved", "exact", "exact", "fuzzy", "exact"]


MARKDOWN_PIECES = st.sampled_from(
    [
        "The router drops replicas. ",
        "The router drops replicas.\n",
        "Decode replicas scale on\nKV-cache occupancy. ",
        "- list item one\n",
        "- list item one\r\n",
        "## Heading\n\n",
        "```\ncode line\n```\n",
        "| a | b |\n",
        "\n",
        "\r\n",
        "  ",
        "🚦 — naïve ",
        "x",
    ]
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    old=st.lists(MARKDOWN_PIECES, max_size=25).map("".join),
    new=st.lists(MARKDOWN_PIECES, max_size=25).map("".join),
)
def test_revision_diff_rebuilds_both_texts(old: str, new: str) -> None:
    diffs = anchor_diff_compute(old_text=old, new_text=new)
    assert "".join(text for op, text in diffs if op != 1) == old
    assert "".join(text for op, text in diffs if op != -1) == new
    assert all(text for _, text in diffs)


def test_diffs_that_do_not_match_the_texts_are_rejected() -> None:
    selector = selector_from_position(text=DOC, start=0, end=10)
    with pytest.raises(ValueError, match="diffs"):
        anchor_locate(selector=selector, old_text=DOC, new_text=DOC + "x", diffs=[(0, DOC)])


def test_empty_quote_is_orphaned() -> None:
    selector = Selector(exact="", prefix="", suffix="", start=0, end=0)
    assert anchor_locate(selector=selector, old_text=DOC, new_text=DOC).status == "orphaned"


def test_quote_not_in_old_text_is_still_searched() -> None:
    # A selector whose offsets and quote disagree with the old text (e.g. imported data): the
    # quote search still finds the passage when its context matches.
    start = DOC.index(TENANT_KEYS)
    selector = replace(
        selector_from_position(text=DOC, start=start, end=start + len(TENANT_KEYS)),
        start=10**6,
        end=10**6 + 5,
    )
    anchor = anchor_locate(selector=selector, old_text=DOC, new_text=DOC)
    assert (anchor.status, anchor.start) == ("exact", start)


# --------------------------------------------------------------------------- helpers' contracts


def test_selector_from_position_context_and_heading_path() -> None:
    start = DOC.index(EVICTED)
    selector = selector_from_position(text=DOC, start=start, end=start + len(EVICTED))
    assert selector.exact == EVICTED
    assert selector.prefix == DOC[start - 32 : start]
    assert len(selector.prefix) == 32
    assert selector.suffix == DOC[start + len(EVICTED) :][:32]
    assert selector.heading_path == (
        "Design: token-streaming inference gateway",
        "Architecture",
        "KV cache",
    )


def test_selector_at_document_edges_and_fenced_headings() -> None:
    text = "# Top\n\n```\n# not a heading\n```\n\n## Sub ##\n\nbody text"
    start = text.index("body")
    selector = selector_from_position(text=text, start=start, end=len(text))
    assert selector.suffix == ""
    assert selector.heading_path == ("Top", "Sub")
    first = selector_from_position(text=text, start=0, end=5)
    assert (first.prefix, first.heading_path) == ("", ())
    with pytest.raises(ValueError):
        selector_from_position(text=text, start=5, end=5)
    with pytest.raises(ValueError):
        selector_from_position(text=text, start=0, end=len(text) + 1)


def test_quote_find_uses_context_then_hint() -> None:
    second = DOC.index(DUP, DOC.index("## Failure modes"))
    first = DOC.index(DUP)
    prefix = DOC[second - 32 : second]
    assert quote_find(text=DOC, exact=DUP, prefix=prefix, suffix="", hint=None) == second
    assert quote_find(text=DOC, exact=DUP, hint=first + 5) == first
    assert quote_find(text=DOC, exact=DUP, hint=second - 5) == second
    assert quote_find(text=DOC, exact="not in the document", hint=0) is None


def test_offsets_are_str_indices_not_bytes() -> None:
    quote = "🚦 — anything slower"
    start = DOC.index(quote)
    new = "Ünïcödé 🚀 preface.\n\n" + DOC
    selector = selector_from_position(text=DOC, start=start, end=start + len(quote))
    anchor = anchor_locate(selector=selector, old_text=DOC, new_text=new)
    assert anchor.status == "exact"  # untouched: the diff keeps it, shifted
    assert new[anchor.start : anchor.end] == quote
    assert anchor.start == start + len("Ünïcödé 🚀 preface.\n\n")


# --------------------------------------------------------------------------- property


MARGIN = 64  # edits stay this far from the quote: beyond the prefix/suffix the UI stores
FILLER = st.text(alphabet="abcdefghijklmnopqrstuvwxyz \n", min_size=0, max_size=40)


@st.composite
def far_edits(draw: st.DrawFn) -> tuple[int, int, list[tuple[int, int, str]]]:
    """A unique quote and up to six insert/delete edits at least MARGIN characters away."""
    start = draw(st.integers(min_value=0, max_value=len(DOC) - 20))
    end = draw(st.integers(min_value=start + 12, max_value=min(len(DOC), start + 160)))
    assume(DOC.count(DOC[start:end]) == 1)
    edits = []
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        before = draw(st.booleans())
        if before and start - MARGIN > 0:
            pos = draw(st.integers(min_value=0, max_value=start - MARGIN))
            length = draw(st.integers(min_value=0, max_value=min(40, start - MARGIN - pos)))
        elif not before and end + MARGIN < len(DOC):
            pos = draw(st.integers(min_value=end + MARGIN, max_value=len(DOC)))
            length = draw(st.integers(min_value=0, max_value=min(40, len(DOC) - pos)))
        else:
            continue
        edits.append((pos, length, draw(FILLER)))
    return start, end, edits


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # the autouse store fixture
)
@given(case=far_edits())
def test_far_edits_keep_the_anchor_on_the_same_passage(
    case: tuple[int, int, list[tuple[int, int, str]]],
) -> None:
    start, end, edits = case
    selector = selector_from_position(text=DOC, start=start, end=end)
    new, shift = DOC, 0
    # Apply right to left so earlier positions stay valid; skip edits overlapping a later one.
    taken: list[tuple[int, int]] = []
    for pos, length, insert in sorted(edits, reverse=True):
        if any(pos < hi and lo < pos + length + 1 for lo, hi in taken):
            continue
        taken.append((pos, pos + length + 1))
        new = new[:pos] + insert + new[pos + length :]
        if pos < start:
            shift += len(insert) - length
    anchor = anchor_locate(selector=selector, old_text=DOC, new_text=new)
    assert anchor.status in ("exact", "moved")
    assert (anchor.start, anchor.end) == (start + shift, end + shift)
    assert new[anchor.start : anchor.end] == selector.exact


# --------------------------------------------------------------------------- folded-text maps


def _fold_maps_by_hand(raw: str) -> tuple[str, list[int], list[int], list[int]]:
    """The folded text and its three maps, one entry per character (the obvious way)."""
    text, starts, ends = "", list[int](), list[int]()
    pos = 0
    while pos < len(raw):
        run = pos
        while run < len(raw) and raw[run].isspace():
            run += 1
        if run > pos:
            text, starts, ends, pos = text + " ", [*starts, pos], [*ends, run], run
        else:
            text, starts, ends, pos = text + raw[pos], [*starts, pos], [*ends, pos + 1], pos + 1
    index = [0] * (len(raw) + 1)
    for folded, (lo, hi) in enumerate(zip(starts, ends, strict=True)):
        for raw_pos in range(lo, hi):
            index[raw_pos] = folded
    index[len(raw)] = len(text)
    return text, starts, ends, index


@settings(max_examples=300, deadline=None)
@given(raw=st.text(alphabet="ab \n\t\r", max_size=40))
def test_folded_text_maps_match_the_per_character_maps(raw: str) -> None:
    folded = _fold_compute(raw)
    text, starts, ends, index = _fold_maps_by_hand(raw)
    assert folded.text == text
    assert [folded.start_of(i) for i in range(len(text))] == starts
    assert [folded.end_of(i) for i in range(len(text))] == ends
    assert [folded.at(i) for i in range(len(raw) + 1)] == index
    assert folded.start_of(len(text)) == len(raw)


# --------------------------------------------------------------------------- look-alikes
# Patterns met in the real-text corpus (bench/reanchor_corpus.py), in texts written for the
# test: a look-alike must never capture an annotation whose passage was edited or went away.


def _land(old: str, new: str, quote: str, *, after: str = "") -> tuple[Anchor, str]:
    start = old.index(quote, old.index(after) if after else 0)
    selector = selector_from_position(text=old, start=start, end=start + len(quote))
    anchor = anchor_locate(selector=selector, old_text=old, new_text=new)
    landed = "" if anchor.start is None else new[anchor.start : anchor.end]
    return anchor, landed


REPEATED = "A manual override exists behind a flag, but it does not apply to dependencies."
RELEASE_NOTES = (
    "# Versions\n\n"
    "Withdrawn versions: new lock files skip them, existing ones keep them. {first}\n\n"
    "Preview versions: only chosen when a requirement names one. " + REPEATED + "\n\n"
    "## Open questions\n\nShould mirrors honour the same rules?\n"
)


def test_a_repeated_sentence_reworded_in_place_does_not_jump_to_its_kept_twin() -> None:
    old = RELEASE_NOTES.format(first=REPEATED)
    reworded = "The flag can still force one, though not for dependencies."
    new = RELEASE_NOTES.format(first=reworded)
    anchor, landed = _land(old, new, REPEATED)
    assert anchor.status in ("fuzzy", "orphaned"), anchor
    if anchor.status == "fuzzy":
        assert landed in reworded
    # The twin that stayed keeps its own annotation.
    twin, landed = _land(old, new, REPEATED, after="Preview")
    assert (twin.status, landed) == ("exact", REPEATED) or twin.status == "moved"


WALKTHROUGH = (
    "## Example\n\nThe example shows a few things:\n\n{items}\n\n"
    "This expands the value in place, which only works for literals.\n"
)


def test_a_renumbered_paragraph_is_not_captured_by_the_new_first_one() -> None:
    old = WALKTHROUGH.format(
        items="First we can see that inputs are declared with `in` rather than `out`.\n\n"
        "Second one operand is a constant."
    )
    new = WALKTHROUGH.format(
        items="First, we can see that several template strings may be given; each one\n"
        "becomes its own line of the program.\n\n"
        "Second, we can see that inputs are declared with `in` rather than `out`.\n\n"
        "Third, one operand is a constant."
    )
    anchor, landed = _land(old, new, "First we can see that inputs are declared")
    assert anchor.status in ("fuzzy", "orphaned"), anchor
    if anchor.status == "fuzzy":
        second = new.index("Second, we can see")
        assert anchor.start is not None
        assert second <= anchor.start < new.index("Third")


COVERAGE = "## Unit tests\n\n" + "".join(
    f"- `pkg/{name}`: `{{date}}` - `{share}% of statements`\n"
    for name, share in [("admit", "80.7"), ("admit/api", "1.4"), ("admit/load", "88.5")]
    + [("admit/scheme", "100.0"), ("webhook", "9.3")]
)


def test_a_phrase_of_one_list_line_stays_on_that_line_when_every_line_changes_alike() -> None:
    old = COVERAGE.format(date="2020-05-12")
    new = COVERAGE.format(date="2022-05-12")
    quote = "`2020-05-12` - `88.5%"
    anchor, landed = _land(old, new, quote)
    assert anchor.status in ("fuzzy", "orphaned"), anchor
    if anchor.status == "fuzzy":
        line = new.index("- `pkg/admit/load`")
        assert anchor.start is not None
        assert line <= anchor.start < new.index("\n", line)
        assert "88.5%" in landed


PRR = (
    "## Production readiness\n\n"
    "###### Can the feature be disabled once enabled?\n\n{one}\n\n"
    "###### Does enabling it change any default behavior?\n\n{two}\n\n"
    "###### Are there tests for enabling and disabling it?\n\n{three}\n"
)


def test_a_templated_answer_rewritten_is_not_captured_by_an_identical_answer_elsewhere() -> None:
    same = "No. The kubelet keeps the previous behavior unless the gate is set."
    old = PRR.format(one="Yes, through the feature gate.", two=same, three=same)
    new = PRR.format(
        one="Yes, through the feature gate.",
        two="Only for pods that opt in with the new field.",
        three=same,
    )
    anchor, landed = _land(old, new, same)  # the answer to the second question
    assert anchor.status == "orphaned" or (
        anchor.status == "fuzzy" and anchor.start is not None and anchor.start < new.index("Are")
    ), anchor
    kept, landed = _land(old, new, same, after="Are there tests")
    assert landed == same
