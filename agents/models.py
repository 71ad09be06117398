"""Models of the agents app."""
