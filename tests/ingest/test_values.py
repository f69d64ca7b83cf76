"""A list of the values a variable or an option takes is that variable's or option's, announced
by the sentence just before it."""

from __future__ import annotations

from compendium.ingest.readers import read_document


def test_values_announced_for_a_variable_belong_to_that_variable(tmp_path):
    path = tmp_path / "colors.html"
    path.write_text("""<html><body><h2>Colors</h2>
<p>The packer looks at the <code>DEPOT</code> variable. It can be worth setting the <code>DEPOT</code>
variable to a different value in these cases:</p>
<dl><dt><code>harbour</code></dt><dd><p><code>harbour</code> ships crates by sea.</p></dd></dl>
<p>The <code>pack</code> and <code>ship</code> commands take one of these values:</p>
<dl><dt><code>done</code></dt><dd><p>Every crate is packed.</p></dd></dl>
</body></html>""", encoding="utf-8")
    doc = read_document(path)
    scopes = {b.term: b.scope for b in doc.blocks if b.kind == "definition"}
    assert scopes["harbour"] == "DEPOT"
    assert scopes["done"] == ""  # values of two names at once: whose is not said
