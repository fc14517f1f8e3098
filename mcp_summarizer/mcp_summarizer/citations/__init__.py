"""Citations: the ids a summary cites (syntax), how a model is asked for them (ask), and
which excerpt each line of a summary came from (attribute).  Pure, no I/O; below the engine,
which asks for and places them, and above nothing but the text layer."""
