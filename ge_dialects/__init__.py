"""The project's dialects: ge (the graph), with fused, task and stream to come."""
