// The engine's wire types the UI uses (docs/protocol.md is the contract).

export type Kind = "note" | "plan" | "task" | "result" | "insight" | "question";
export type Status = "todo" | "doing" | "done" | "failed" | "blocked";

export interface Entry {
  id: string;
  pad: string;
  author: string;
  kind: Kind;
  content: string;
  tags: string[];
  status: Status | null;
  assignee: string | null;
  resume: string | null;
  lease_until: string | null;
  attempts: number;
  error: string | null;
  category: string | null;
  confidence: number | null;
  depends_on: string[];
  remind_at: string | null;
  pinned: boolean;
  meta: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface Pad {
  name: string;
  entries: number;
  last_write_at: string;
  expires_at: string | null;
  ttl_seconds: number | null;
  max_entries: number | null;
  archived: boolean;
}

export type EventType =
  | "created"
  | "updated"
  | "deleted"
  | "needs_eyes"
  | "reminder"
  | "pad_expired"
  | "lagged";

export interface PadEvent {
  subscription: number;
  type: EventType;
  pad?: string;
  entry?: Entry;
  missed?: number;
}

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface Settings {
  hotkey: string;
  author: string;
  notifications: boolean;
  default_ttl_seconds: number | null;
  pad: string;
  metrics: string | null;
}
