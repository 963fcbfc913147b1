-- Per-author inbox cursors: the newest entry id an author's inbox has shown.
-- `pad mcp` appends the inbox to every tool result, since many MCP clients
-- never read server notifications; the engine keeps the cursor so that the
-- stateless `pad mcp` processes need not.
CREATE TABLE inbox_cursors (
    author TEXT PRIMARY KEY,
    seq    INTEGER NOT NULL
) STRICT;
