"""Whether a page's sentences say what the evidence they cite says, and the page with only
those that do."""

from __future__ import annotations

from ..support import check_text

# A page most of whose sentences lack support is asked again, naming them; past this share of
# supported sentences it is kept with its unsupported sentences dropped (support.check_text).
MIN_SUPPORTED_SHARE = 0.5
MIN_KEPT_SENTENCES = 3  # supported sentences that make a page of a reply that stayed short of the share


def support_problem(text: str, evidence: dict[str, str]) -> str | None:
    """Why a page's sentences cannot be kept as written: most of them cite nothing, or cite
    evidence that does not say what they say. Names up to three of them."""
    report = check_text(text, evidence, recite_from=_by_ref(evidence))
    if not report.sentences:
        return None
    kept = sum(1 for s in report.sentences if s.ok or s.supported)
    if kept >= MIN_SUPPORTED_SHARE * len(report.sentences):
        return None
    bad = [s for s in report.sentences if not (s.ok or s.supported)][:3]
    shown = "; ".join(f"{s.text[:120]!r} ({'cites nothing' if not s.cited else 'its evidence does not say this'})"
                      for s in bad)
    return (f"{len(report.sentences) - kept} of {len(report.sentences)} sentences are not supported by the "
            f"evidence they cite, e.g. {shown}. Each sentence must restate its cited evidence, in its words")


def supported_text(text: str, evidence: dict[str, str]) -> str:
    """The page with only its supported sentences (support.check_text), each paragraph said once; a
    sentence citing the wrong item of its evidence, which another item restates, cites that
    one instead."""
    return check_text(text, evidence, recite_from=_by_ref(evidence), code_from=evidence.values(), once=True).kept_text


def _by_ref(evidence: dict[str, str]) -> dict[str, str]:
    return {key: text for key, text in evidence.items() if key.isdigit()}
