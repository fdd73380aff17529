"""Policy: decisions about what the model may hear (selective) and what the requester may be told."""
