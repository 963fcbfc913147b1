-- Deliveries of addressed notes to A2A agents (as on SQLite): every engine
-- of a team sees them; each sends those for the agents registered with it.
CREATE TABLE deliveries (
    entry BIGINT NOT NULL,
    agent TEXT NOT NULL,
    root BIGINT NOT NULL,
    pad TEXT NOT NULL,
    state TEXT,
    taken BOOLEAN NOT NULL DEFAULT FALSE,
    live BOOLEAN NOT NULL DEFAULT TRUE,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (root, agent, entry)
);
CREATE INDEX deliveries_waiting ON deliveries (entry) WHERE NOT taken;
CREATE INDEX deliveries_conversations ON deliveries (live, updated_at) WHERE entry = root;
