"""Ingest's parts below the phases: readers that turn a file into blocks (readers/, one module
per format), chunking, reading in bounded child processes, and which files are documents.
The ingest phase (compendium.phases.ingest) calls them and writes what they give to the store."""
