"""The end-to-end harness for a live stand: render its fixture, then run one tenant through its life."""
