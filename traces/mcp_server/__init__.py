"""The MCP server, so agents can ask Loop Inspector what people ask its pages (issue 27)."""
