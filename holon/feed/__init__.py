"""The operator's view of the runtime: the presentation layer over audit events, the feed and the
notify hook (see README.md)."""
