"""Code that more than one Mythline service really shares."""
