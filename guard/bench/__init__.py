"""guard bench: SH-Bench and VoxPrivacy scoring, replay against the live service, reports, gate."""
