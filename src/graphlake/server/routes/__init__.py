"""One router per resource: health, branches, tables (reads and SQL), writes, merge."""
