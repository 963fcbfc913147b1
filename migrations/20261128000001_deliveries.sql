-- Deliveries of addressed notes to A2A agents, in the store with the notes
-- (the agents' secrets stay in the engine's agents.json). A row is one
-- message for one agent's conversation: the addressed note itself (entry =
-- root), or a reply to pass on in the conversation of the note `root`
-- (entry != root; one reply may go to several conversations). It is
-- written in the transaction of its entry, so an acknowledged note has its
-- delivery; `taken` says the conversation has it. The root row holds the
-- conversation's state (JSON, NULL until begun) and whether it goes on.
CREATE TABLE deliveries (
    entry INTEGER NOT NULL,
    agent TEXT NOT NULL,
    root INTEGER NOT NULL,
    pad TEXT NOT NULL,
    state TEXT,
    taken INTEGER NOT NULL DEFAULT 0,
    live INTEGER NOT NULL DEFAULT 1,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (root, agent, entry)
) STRICT;
CREATE INDEX deliveries_waiting ON deliveries (entry) WHERE taken = 0;
CREATE INDEX deliveries_conversations ON deliveries (live, updated_at) WHERE entry = root;
