"""The project's dialects: ge (the graph), with fused, task and stream to come."""

from ge import refuse_bare_import

refuse_bare_import(__name__)
