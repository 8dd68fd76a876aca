"""tla layer."""
