"""Generated from proto/guard/v1/guard.proto by scripts/gen_proto.sh. Do not edit; tests check drift."""
