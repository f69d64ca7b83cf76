"""Compendium compiles a knowledge base into a cited wiki, an entity graph and topics."""

__version__ = "0.1.0"
