"""Fidelity: the facts a summary kept, dropped or added, checked against its source."""
