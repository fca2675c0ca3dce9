"""Export of a submitted review as JSON and Markdown (docs/design.md, Invariants).

Order: ranked risks (rank 1 first, unranked risks after them by severity), missing items,
alternatives with their tradeoffs, already-considered, constraint notes and questions,
checklist coverage, and orphans last — annotations whose passage is orphaned in the latest
revision are listed there only, with their quote.

Quotes are as of the revision the anchors are given for (the latest, "anchors as of rN"): the
text at each anchor in that revision; `original_quote` keeps the text the reviewer selected.
Each annotation carries its thread's replies, oldest first (issue 33).
"""

from typing import Any, Protocol

from .models import (
    Annotation,
    AnnotationAnchor,
    Area,
    ChecklistItem,
    DocRevision,
    Reply,
    Review,
    Verdict,
)
from .selectors import checklist_coverage

SEVERITY_ORDER = {value: index for index, value in enumerate(Annotation.Severity.values)}
AREA_LABELS = dict(Area.choices)
STATUS_LABELS = dict(ChecklistItem.Status.choices)
VERDICT_LABELS = dict(Verdict.choices)

# (JSON key, Markdown heading, kind), in export order after the risks.
SECTIONS = [
    ("missing", "Missing", Annotation.Kind.MISSING),
    ("alternatives", "Alternatives", Annotation.Kind.ALTERNATIVE),
    ("already_considered", "Already considered", Annotation.Kind.ALREADY_CONSIDERED),
    ("constraints", "Against the pinned constraints", Annotation.Kind.CONSTRAINT),
    ("questions", "Questions", Annotation.Kind.QUESTION),
]


class Rankable(Protocol):
    """What ranking a risk reads: an Annotation, or a review page's light AnnotationRow."""

    @property
    def pk(self) -> Any: ...
    @property
    def rank(self) -> int | None: ...
    @property
    def severity(self) -> str: ...


def risk_order(annotation: Rankable) -> tuple[int, int, int, int]:
    """Rank 1 first; unranked risks after every ranked one, worst severity first."""
    ranked = annotation.rank is not None
    return (
        0 if ranked else 1,
        annotation.rank or 0,
        SEVERITY_ORDER.get(annotation.severity, 99),
        annotation.pk,
    )


def _anchor_in(annotation: Annotation, revision: DocRevision) -> AnnotationAnchor | None:
    """The annotation's anchor in `revision`, from its prefetched anchors."""
    return next((a for a in annotation.anchors.all() if a.revision_id == revision.pk), None)


def _quote(annotation: Annotation, anchor: AnnotationAnchor | None, latest_text: str) -> str:
    """The annotated passage as it reads in the latest revision; the reviewer's own selection
    when it has no span there (orphaned, or no anchor computed yet)."""
    if anchor is not None and anchor.start is not None and anchor.end is not None:
        return latest_text[anchor.start : anchor.end]
    return annotation.exact


def _item(
    annotation: Annotation,
    latest: DocRevision,
    latest_text: str,
    replies: dict[int, list[Reply]],
) -> dict[str, Any]:
    anchor = _anchor_in(annotation, latest)
    return {
        "id": annotation.pk,
        "kind": annotation.kind,
        "area": annotation.area,
        "area_label": AREA_LABELS.get(annotation.area, annotation.area),
        "severity": annotation.severity,
        "rank": annotation.rank,
        "status": annotation.status,
        "body": annotation.body,
        "tradeoff": annotation.tradeoff,
        "constraint": annotation.constraint,
        "whole_document": annotation.whole_document,
        "quote": _quote(annotation, anchor, latest_text) or None,
        "original_quote": annotation.exact or None,
        "heading_path": annotation.heading_path,
        "anchor": None
        if anchor is None
        else {
            "revision": latest.pk,
            "revision_number": latest.number,
            "status": anchor.status,
            "start": anchor.start,
            "end": anchor.end,
            "score": anchor.score,
        },
        "replies": [
            {
                "id": reply.pk,
                "author": reply.author.get_username(),
                "created_at": reply.created_at.isoformat(),
                "edited": reply.edited_at is not None,
                "body": reply.body,
            }
            for reply in replies.get(annotation.pk, [])
        ],
    }


def review_export_data(
    *,
    review: Review,
    annotations: list[Annotation],
    checklist: list[ChecklistItem],
    latest: DocRevision,
    latest_text: str,
    replies: list[Reply],
) -> dict[str, Any]:
    """The export as one JSON-ready dict, sections in export order. `latest_text` is the latest
    revision's Markdown (quotes are read from it at the anchors), `replies` every reply of the
    review's threads."""
    threads: dict[int, list[Reply]] = {}
    for reply in replies:
        threads.setdefault(reply.annotation_id, []).append(reply)

    def item(annotation: Annotation) -> dict[str, Any]:
        return _item(annotation, latest, latest_text, threads)

    orphans = []
    kept = []
    for annotation in annotations:
        anchor = _anchor_in(annotation, latest)
        if anchor is not None and anchor.status == AnnotationAnchor.Status.ORPHANED:
            orphans.append(annotation)
        else:
            kept.append(annotation)
    risks = sorted((a for a in kept if a.kind == Annotation.Kind.RISK), key=risk_order)
    doc = review.revision.doc
    data: dict[str, Any] = {
        "review": {
            "id": review.pk,
            "doc": doc.pk,
            "doc_title": doc.title,
            "revision": review.revision_id,
            "revision_number": review.revision.number,
            "reviewer": review.reviewer.get_username(),
            "submitted_at": review.submitted_at.isoformat() if review.submitted_at else None,
            "verdict": review.verdict,
            "summary": review.summary,
            "latest_revision": latest.pk,
            "latest_revision_number": latest.number,
        },
        "risks": [item(a) for a in risks],
    }
    for key, _, kind in SECTIONS:
        data[key] = [item(a) for a in kept if a.kind == kind]
    data["checklist"] = {
        "coverage": checklist_coverage(checklist),
        "items": [
            {
                "area": item.area,
                "area_label": AREA_LABELS[item.area],
                "status": item.status,
                "note": item.note,
            }
            for item in checklist
        ],
    }
    data["orphans"] = [item(a) for a in orphans]
    return data


def _quote_line(item: dict[str, Any]) -> str:
    if item["whole_document"] or not item["quote"]:
        return "   - About the whole document."
    quote = " ".join(item["quote"].split())
    if len(quote) > 240:
        quote = quote[:237] + "…"
    where = f" (§ {' › '.join(item['heading_path'])})" if item["heading_path"] else ""
    return f"   - > {quote}{where}"


def _annotation_md(item: dict[str, Any], bullet: str) -> list[str]:
    head = f"{bullet} **[{item['severity']}] {item['area_label']}** — {item['body']}"
    lines = [head.replace("\n", "\n   "), _quote_line(item)]
    if item["kind"] == Annotation.Kind.ALTERNATIVE:
        lines.append(f"   - Tradeoff: {item['tradeoff']}".replace("\n", "\n     "))
    if item["constraint"]:
        lines.append(f"   - Pinned constraint: {item['constraint']}")
    if item["status"] != Annotation.Status.OPEN:
        lines.append(f"   - Status: {item['status']}")
    for reply in item["replies"]:
        body = " ".join(reply["body"].split())
        lines.append(f"   - Reply from {reply['author']}: {body}")
    return lines


def review_export_markdown(data: dict[str, Any]) -> str:
    """The export as a Markdown document, in the same order as the JSON."""
    meta = data["review"]
    lines = [
        f"# Review: {meta['doc_title']} (r{meta['revision_number']})",
        "",
        f"Reviewer: {meta['reviewer']} · submitted {meta['submitted_at'] or '—'} · "
        f"anchors as of r{meta['latest_revision_number']}",
        "",
    ]
    if meta.get("verdict"):
        lines += [f"Verdict: **{VERDICT_LABELS.get(meta['verdict'], meta['verdict'])}**", ""]
    if meta["summary"]:
        lines += ["## Summary", "", meta["summary"], ""]
    lines += ["## Ranked risks", ""]
    if data["risks"]:
        for index, item in enumerate(data["risks"], start=1):
            label = f"{item['rank']}." if item["rank"] else f"{index}. (unranked)"
            lines += _annotation_md(item, label)
    else:
        lines.append("None.")
    lines.append("")
    for key, heading, _ in SECTIONS:
        if not data[key]:
            continue
        lines += [f"## {heading}", ""]
        for item in data[key]:
            lines += _annotation_md(item, "-")
        lines.append("")
    coverage = data["checklist"]["coverage"]
    lines += [
        "## Checklist coverage",
        "",
        f"Covered {coverage['covered']} · gap {coverage['gap']} · n/a {coverage['na']} · "
        f"not assessed {coverage['unset']} (of {sum(coverage.values())})",
        "",
        "| Area | Status | Note |",
        "|---|---|---|",
    ]
    for item in data["checklist"]["items"]:
        note = " ".join(item["note"].split()).replace("|", "\\|")
        lines.append(f"| {item['area_label']} | {STATUS_LABELS[item['status']]} | {note} |")
    lines.append("")
    if data["orphans"]:
        lines += [
            "## Orphans",
            "",
            f"Their passage is gone from r{meta['latest_revision_number']}.",
            "",
        ]
        for item in data["orphans"]:
            lines += _annotation_md(item, f"- ({item['kind']})")
        lines.append("")
    return "\n".join(lines)
