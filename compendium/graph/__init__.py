"""Graph algorithms the phases, the outline and retrieval share: the weighted graph and its communities."""
