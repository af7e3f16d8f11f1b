"""A short human summary of one page's evidence (the text output of ``auditor page``).

Touches: nothing.
"""

from __future__ import annotations

from auditor.evidence.blocks import decode_blocks
from auditor.evidence.model import DatedValue, PageEvidence

__all__ = ["summarize"]


def summarize(evidence: PageEvidence) -> str:
    """A few lines: what the page says about its changes, and whether to believe it."""
    lines = [f"{evidence.final_url or evidence.url}  (HTTP {evidence.status or '-'})"]
    if evidence.error:
        lines.append(f"  not read: {evidence.error}: {evidence.error_detail}")
        return "\n".join(lines)
    lines.append(f"  date modified:  {_dated(evidence.date_modified)}")
    lines.append(f"  date published: {_dated(evidence.date_published)}")
    lines.append(f"  Last-Modified:  {_dated(evidence.http_last_modified)}")
    if evidence.etag:
        lines.append(f"  ETag:           {evidence.etag}")
    fp = evidence.fingerprint
    if fp is not None:
        hashes = f"sha256 {fp.exact[:16]}…, simhash {fp.simhash:016x}"
        lines.append(f"  content:        {fp.words:,} words, {hashes}")
        blocks = decode_blocks(fp.blocks)
        if blocks:
            content = sum(b.content for b in blocks)
            lines.append(f"  blocks:         {len(blocks):,} ({content:,} of the main content)")
    if evidence.truncated:
        lines.append("  truncated at the byte cap")
    if evidence.notes:
        lines.append(f"  notes:          {', '.join(evidence.notes)}")
    return "\n".join(lines)


def _dated(value: DatedValue | None) -> str:
    if value is None:
        return "none"
    where = value.source if value.node_type is None else f"{value.source} {value.node_type}"
    verdict = "credible" if value.credible else f"NOT credible: {value.why_not_credible}"
    return f"{value.value.isoformat()}  ({where}, {value.precision}; {verdict})"
