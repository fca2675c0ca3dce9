"""Export of a submitted review as JSON and Markdown (docs/design.md, Invariants).

Order: ranked risks (rank 1 first, unranked risks after them by severity), missing items,
alternatives with their tradeoffs, already-considered, constraint notes and questions,
checklist coverage, and orphans last — annotations whose passage is orphaned in the latest
revision are listed there only, with their quote.
"""

from typing import Any, Protocol

from .models import (
    Annotation,
    AnnotationAnchor,
    Area,
    ChecklistItem,
    DocRevision,
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


def _item(annotation: Annotation, latest: DocRevision) -> dict[str, Any]:
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
        "quote": annotation.exact or None,
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
    }


def review_export_data(
    *,
    review: Review,
    annotations: list[Annotation],
    checklist: list[ChecklistItem],
    latest: DocRevision,
) -> dict[str, Any]:
    """The export as one JSON-ready dict, sections in export order."""
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
        "risks": [_item(a, latest) for a in risks],
    }
    for key, _, kind in SECTIONS:
        data[key] = [_item(a, latest) for a in kept if a.kind == kind]
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
    data["orphans"] = [_item(a, latest) for a in orphans]
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
