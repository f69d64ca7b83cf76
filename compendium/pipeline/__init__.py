"""What a phase sees: its context and result, progress events, and stage marks."""
