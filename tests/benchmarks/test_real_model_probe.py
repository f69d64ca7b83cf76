"""The real-model probe's evidence: the cited sentences of an offline page, cut whole."""

from benchmarks.real_model import cited_sentences

# An offline page's paragraph (samples/corpus, transaction-ids.md): stops inside numbers.
PAGE = (
    "Lumen compares XIDs with modulo-2^32 arithmetic.[^2] For any given XID, the 2.1 billion XIDs "
    "before it are in the past and the 2.1 billion after it are in the future.[^2] This circular "
    "comparison is what makes the counter reusable, but it creates a hazard.[^3]\n\n"
    "- An XID is a 32-bit unsigned integer, so there are about 4.29 billion of them.[^2]\n"
    "A sentence with no marker. See also v1.4.0 and e.g. the 8.0 release.[^4][^5]\n"
)


def test_a_decimal_number_does_not_end_a_sentence():
    assert cited_sentences(PAGE) == [
        ("Lumen compares XIDs with modulo-2^32 arithmetic.", "2"),
        ("For any given XID, the 2.1 billion XIDs before it are in the past and the 2.1 billion "
         "after it are in the future.", "2"),
        ("This circular comparison is what makes the counter reusable, but it creates a hazard.", "3"),
        ("An XID is a 32-bit unsigned integer, so there are about 4.29 billion of them.", "2"),
        ("See also v1.4.0 and e.g. the 8.0 release.", "4"),  # an abbreviation ends no sentence
    ]
