"""The bundled MCP server: simplex-mcp."""
