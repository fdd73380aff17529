"""BPFT: the bystander-privacy fine-tuning recipe (data builder now; training and serving to come)."""
