"""What a serving process does to itself, whatever it serves: the C allocator's arenas, the
GIL's switch interval, the JSON logs, and its quick exit at the end."""
