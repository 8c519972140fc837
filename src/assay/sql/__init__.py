"""Gold SQL: the text-to-SQL eval type (placeholder while building)."""
