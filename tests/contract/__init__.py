"""Contract tests every Store backend passes."""
